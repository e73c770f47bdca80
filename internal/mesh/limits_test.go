package mesh

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/yamlfile"
)

// meshOf is a file of n hosts, a full mesh of them, and schedules of
// the mesh (one per test name given).
func meshOf(n int, tests ...string) string {
	var b strings.Builder
	b.WriteString("hosts:\n")
	for i := range n {
		fmt.Fprintf(&b, "  h%d:\n", i)
	}
	b.WriteString("groups:\n  all:\n    mesh: [")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "h%d", i)
	}
	b.WriteString("]\ntests:\n")
	for _, t := range tests {
		fmt.Fprintf(&b, "  %s: {test: rr -t 1, class: background}\n", t)
	}
	b.WriteString("schedules:\n")
	for _, t := range tests {
		fmt.Fprintf(&b, "  - {group: all, test: %s, repeat: 1h}\n", t)
	}
	return b.String()
}

func hostsOnly(n int) string {
	var b strings.Builder
	b.WriteString("hosts:\n")
	for i := range n {
		fmt.Fprintf(&b, "  h%d:\n", i)
	}
	return b.String()
}

// Each limit refuses one past it, with one line naming it, and takes
// what is at it.
func TestMeshLimits(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
	}{
		{"file size", "hosts: {a: }\n#" + strings.Repeat("x", MaxFileSize), "over the limit of 4194304"},
		{"value", "hosts: {a: {addr: " + strings.Repeat("a", MaxScalarLen+1) + "}}\n", "a value of 1025 bytes, over the limit of 1024"},
		{"hosts", hostsOnly(MaxHosts + 1), "2001 hosts, over the limit of 2000"},
		{"full mesh", meshOf(501, "t"), "a full mesh of 501 hosts is 250500 ordered pairs, over the limit of 250000"},
		{"schedules", meshOf(400, "t", "u"), "make 319200 tasks, over the limit of 250000"},
		{"alias", "hosts: {a: &x {port: 1}, b: *x}\n", "aliases"},
		{"addr", "hosts: {a: {addr: '-c'}}\n", "want a host name or an IP address"},
		{"name", "hosts: {'-x': }\n", "a host's name"},
	} {
		_, err := Parse("m.yaml", []byte(c.src))
		var e *yamlfile.Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
	for name, src := range map[string]string{
		"hosts at the limit":     hostsOnly(MaxHosts),
		"a full mesh of 500":     meshOf(500, "t"),
		"a value at the limit":   "hosts: {a: {addr: " + strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "}}\n",
		"two schedules of 300 ×": meshOf(300, "t", "u"),
	} {
		if _, err := Parse("m.yaml", []byte(src)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A YAML error says its position once, as file:line.
func TestYAMLErrorSaysItsLineOnce(t *testing.T) {
	_, err := Parse("mesh.yaml", []byte("hosts: {a: }\ngroups: [\n"))
	if err == nil || strings.Count(err.Error(), "line") != 0 || !strings.HasPrefix(err.Error(), "mesh.yaml:") {
		t.Fatalf("%v", err)
	}
}

// The 1,000-host file a review applied (11.3 s, 590 MB before limits):
// how long its parse takes to refuse, and a 500-host mesh's expansion.
func BenchmarkParseFullMesh(b *testing.B) {
	for _, n := range []int{500, 1000} {
		src := []byte(meshOf(n, "t"))
		b.Run(fmt.Sprint(n, "hosts"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := Parse("m.yaml", src)
				if err == nil {
					_ = m.Tasks()
				}
			}
		})
	}
}

// A sampled group of 1,000 hosts probed to 4 partners a minute and
// measured to 1 every 10 minutes: parsed, checked and expanded into its
// 5,000 rotating tasks.
func BenchmarkParseSampledThousand(b *testing.B) {
	src := strings.Replace(groupOf(1000, "sampled 4", "test: rr -t 5, class: background", "1m"), "schedules:\n",
		"  meas: {test: client -t 10}\nschedules:\n  - {group: one, test: meas, repeat: 10m}\n", 1)
	src = strings.Replace(src, "groups:\n", "groups:\n  one: {sampled: {hosts: [all], partners: 1}}\n", 1)
	b.ReportAllocs()
	for b.Loop() {
		m, err := Parse("m.yaml", []byte(src))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.CheckUtilisation(); err != nil {
			b.Fatal(err)
		}
		if n := len(m.Tasks()); n != 5000 {
			b.Fatalf("%d tasks", n)
		}
	}
}
