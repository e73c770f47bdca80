package campaign

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/yamlfile"
)

const goodFile = `# windows × durations
name: wd
target: lab-b
port: 5202
repeat: 2
order: sequential
shuffle_key: 99
pause: 5s
axes:
  window: [64K, 1M]
  t: 10s,60s
flags:
  interval: 0
  N: true
`

func TestParseFile(t *testing.T) {
	s, err := ParseFile("c.yaml", []byte(goodFile))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "wd" || !reflect.DeepEqual(s.Targets, []string{"lab-b"}) || s.Port != 5202 || s.Repeat != 2 ||
		s.Order != OrderSequential || s.ShuffleKey != 99 || s.Pause != 5*time.Second {
		t.Errorf("spec %+v", s)
	}
	if len(s.Axes) != 2 || s.Axes[1].Name != AxisTime || *s.Axes[1].Values[1].Num != 60 {
		t.Errorf("axes %+v", s.Axes)
	}
	if !reflect.DeepEqual(s.Fixed, []string{"-N=true", "--interval=0"}) {
		t.Errorf("fixed flags %q", s.Fixed)
	}
	if n := len(s.Plan()); n != 8 {
		t.Errorf("%d runs, want 8", n)
	}
}

func TestParseFileErrorsNameLineAndKey(t *testing.T) {
	for _, c := range []struct{ name, edit, at, key string }{
		{"unknown key", "pause: 5s\n", "9:1", ""},
		{"bad value", "  window: [64K, 1M]\n", "10:17", "axes.window"},
		{"duplicate axis", "  t: 10s,60s\n", "12:3", "axes.time"},
		{"unknown axis", "  t: 10s,60s\n", "11:3", "axes.colour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var in string
			switch c.name {
			case "unknown key":
				in = strings.Replace(goodFile, c.edit, c.edit+"colour: red\n", 1)
			case "bad value":
				in = strings.Replace(goodFile, c.edit, "  window: [64K, lots]\n", 1)
			case "duplicate axis":
				in = strings.Replace(goodFile, c.edit, c.edit+"  time: [5]\n", 1)
			case "unknown axis":
				in = strings.Replace(goodFile, c.edit, "  colour: [red]\n", 1)
			}
			_, err := ParseFile("c.yaml", []byte(in))
			var fe *yamlfile.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *yamlfile.Error", err)
			}
			if !strings.HasPrefix(err.Error(), "c.yaml:"+c.at+": ") || fe.Key != c.key {
				t.Errorf("%v: want line:column %s and key %q", err, c.at, c.key)
			}
		})
	}
}

func TestParseFileRejects(t *testing.T) {
	for _, in := range []string{"", "- a\n", "name: x\n", "name: x\ntarget: h\norder: random\n", "name: [x\n",
		"name: x\ntarget: h\nrepeat: 0\n", "name: x\nname: y\ntarget: h\n", "name: x\ntarget: h\naxes: [window]\n"} {
		if _, err := ParseFile("c.yaml", []byte(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add([]byte(goodFile))
	f.Add([]byte("name: x\ntarget: h\naxes:\n  window: 1K,2K\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseFile("f.yaml", b)
		if err == nil && len(s.Plan()) > MaxRuns {
			t.Fatalf("planned %d runs", len(s.Plan()))
		}
	})
}

// A campaign file's limits refuse one past them, with one line, before
// anything is expanded.
func TestParseFileLimits(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"file size", goodFile + "#" + strings.Repeat("x", MaxFileSize), "over the limit of 1048576"},
		{"value", strings.Replace(goodFile, "name: wd", "name: "+strings.Repeat("w", MaxScalarLen+1), 1), "a value of 1025 bytes, over the limit of 1024"},
		{"alias", strings.Replace(goodFile, "target: lab-b", "target: &t lab-b\ntargets: [*t]", 1), "aliases"},
	} {
		_, err := ParseFile("c.yaml", []byte(c.src))
		var fe *yamlfile.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
	s, err := ParseFile("c.yaml", []byte(strings.Replace(goodFile, "repeat: 2", "repeat: 9223372036854775807", 1)))
	if err == nil {
		err = s.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "repeat") {
		t.Errorf("a huge repeat: %v", err)
	}
}
