package group

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/spec"
)

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Endpoint
		bad  bool
	}{
		{in: "a1", want: Endpoint{"a1", 5201}},
		{in: "a1:6000", want: Endpoint{"a1", 6000}},
		{in: "10.0.0.1", want: Endpoint{"10.0.0.1", 5201}},
		{in: "10.0.0.1:7", want: Endpoint{"10.0.0.1", 7}},
		{in: "2001:db8::1", want: Endpoint{"2001:db8::1", 5201}},
		{in: "[2001:db8::1]", want: Endpoint{"2001:db8::1", 5201}},
		{in: "[2001:db8::1]:5300", want: Endpoint{"2001:db8::1", 5300}},
		{in: "", bad: true},
		{in: "a1:0", bad: true},
		{in: "a1:99999", bad: true},
		{in: "a1:x", bad: true},
		{in: ":5201", bad: true},
	} {
		got, err := ParseEndpoint(tc.in, 5201)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted as %v", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if s := (Endpoint{"2001:db8::1", 5201}).String(); s != "[2001:db8::1]:5201" {
		t.Errorf("String = %s", s)
	}
}

func TestCheckPairsRefusesASenderTwice(t *testing.T) {
	a, _ := NewPair("a1", "b", 5201)
	b, _ := NewPair("a1:5201", "c", 5201)
	err := CheckPairs([]Pair{a, b})
	if err == nil || !strings.Contains(err.Error(), "a1:5201 is named twice") {
		t.Fatalf("err = %v", err)
	}
	c, _ := NewPair("a2", "b", 5201)
	if err := CheckPairs([]Pair{a, c}); err != nil {
		t.Fatal(err)
	}
	if err := CheckPairs(nil); err == nil {
		t.Fatal("no pairs accepted")
	}
}

func TestResolveNamesTheHost(t *testing.T) {
	a, _ := NewPair("a1", "10.0.0.2", 5201)
	b, _ := NewPair("a2", "nowhere", 5201)
	var asked []string
	lookup := func(_ context.Context, h string) ([]string, error) {
		asked = append(asked, h)
		if h == "nowhere" {
			return nil, errors.New("no such host")
		}
		return []string{"10.0.0.1"}, nil
	}
	err := Resolve(context.Background(), []Pair{a, b}, lookup)
	if err == nil || !strings.Contains(err.Error(), "host nowhere does not resolve") {
		t.Fatalf("err = %v", err)
	}
	if strings.Join(asked, " ") != "a1 a2 nowhere" { // addresses are not looked up
		t.Fatalf("looked up %v", asked)
	}
}

func TestOptionsSpec(t *testing.T) {
	s, err := Options{Duration: 3 * time.Second, Parallel: 2, UDP: true, Bitrate: "300m"}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if s.Protocol != spec.UDP || s.Rate != 300e6 || s.Streams != 2 || s.Duration != 3*time.Second || s.Length != spec.DefaultUDPLength {
		t.Fatalf("spec %+v", s)
	}
	if _, err := (Options{Bitrate: "1m/4"}).Spec(); err == nil {
		t.Fatal("a TCP burst accepted")
	}
	if _, err := (Options{Bitrate: "fast"}).Spec(); err == nil {
		t.Fatal("a bad rate accepted")
	}
	// -O runs before the -t that is measured, as for one client: a group
	// at -t 10 -O 2 measured 8 s before.
	s, err = Options{Duration: 10 * time.Second, Omit: 2 * time.Second}.Spec()
	if err != nil || s.Duration != 12*time.Second || s.Omit != 2*time.Second {
		t.Fatalf("-t 10 -O 2: %v %v, want 12 s with 2 omitted", s.Duration, err)
	}
	if _, err := (Options{Length: -5}).Spec(); err == nil || !strings.Contains(err.Error(), "--length") {
		t.Fatalf("-l -5: %v", err)
	}
}

// TestOptionsSpecIsTheClients holds a group's test to the client's: each
// option set on the client's flags by its declared name gives the spec,
// or the error, that the same flags on a client's command line give.
func TestOptionsSpecIsTheClients(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		argv []string
	}{
		{Options{}, nil},
		{Options{Duration: 1500 * time.Millisecond, Interval: 250 * time.Millisecond, Omit: time.Second}, []string{"-t", "1.5", "-i", "0.25", "-O", "1"}},
		{Options{Parallel: 3, UDP: true, Bitrate: "40m/8", Length: 1200}, []string{"-P", "3", "-u", "-b", "40m/8", "-l", "1200"}},
		{Options{Reverse: true, Window: 4 << 20, Bitrate: "1G"}, []string{"-R", "-w", "4M", "-b", "1G"}},
		{Options{Bidir: true}, []string{"--bidir"}},
		{Options{Bitrate: "1m/4"}, []string{"-b", "1m/4"}},
		{Options{Bitrate: "fast"}, []string{"-b", "fast"}},
		{Options{Length: -5}, []string{"--length=-5"}},
		{Options{Window: -1}, []string{"--window=-1"}},
	} {
		got, gotErr := tc.o.Spec()
		want, _, wantErr := measure.Parse(measure.KindClient, tc.argv)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%v: error %v, the client's %v", tc.argv, gotErr, wantErr)
			continue
		}
		if wantErr == nil && !reflect.DeepEqual(got, want.Client.Spec) {
			t.Errorf("%v: spec %+v, the client's %+v", tc.argv, got, want.Client.Spec)
		}
	}
}

func writeFile(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "group.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadFilePerPairFlags(t *testing.T) {
	f, err := ReadFile(writeFile(t, `
agent-key-file: k
start-in: 1s
time: 5
parallel: 2
pairs:
  - sender: a1
    receiver: b
  - sender: "[2001:db8::2]:6000"
    receiver: b:5300
    parallel: 4
    reverse: true
    window: 4M
`))
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := f.PairsOf(Options{}, 5201)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || f.AgentKeyFile != "k" || f.StartIn != "1s" {
		t.Fatalf("file %+v", f)
	}
	p0, p1 := pairs[0], pairs[1]
	if p0.Spec.Streams != 2 || p0.Spec.Duration != 5*time.Second || p0.Spec.Reverse {
		t.Fatalf("pair 0 spec %+v", p0.Spec)
	}
	if p1.Spec.Streams != 4 || !p1.Spec.Reverse || p1.Spec.Window != 4<<20 || p1.Spec.Duration != 5*time.Second {
		t.Fatalf("pair 1 spec %+v", p1.Spec)
	}
	if p1.Sender.String() != "[2001:db8::2]:6000" || p1.Receiver.String() != "b:5300" {
		t.Fatalf("pair 1 %s", p1.Name())
	}
}

func TestReadFileRefusesUnknownKeysAndBadValues(t *testing.T) {
	if _, err := ReadFile(writeFile(t, "pairs:\n  - sender: a1\n    reciever: b\n")); err == nil || !strings.Contains(err.Error(), "reciever") {
		t.Fatalf("typo: err = %v", err)
	}
	f, err := ReadFile(writeFile(t, "pairs:\n  - sender: a1\n    receiver: b\n    window: lots\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.PairsOf(Options{}, 5201); err == nil || !strings.Contains(err.Error(), "pairs[0]: window") {
		t.Fatalf("bad window: err = %v", err)
	}
	f, _ = ReadFile(writeFile(t, "pairs:\n  - sender: a1\n"))
	if _, err := f.PairsOf(Options{}, 5201); err == nil {
		t.Fatal("a pair without receiver accepted")
	}
}
