package hostmon

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTree creates files (relative path -> content) under a temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var sysctlFixture = map[string]string{
	"net/core/rmem_max":                       "212992\n",
	"net/core/wmem_max":                       "4194304\n",
	"net/ipv4/tcp_rmem":                       "4096\t131072\t6291456\n",
	"net/ipv4/tcp_wmem":                       "4096\t16384\t4194304\n",
	"net/ipv4/tcp_congestion_control":         "cubic\n",
	"net/ipv4/tcp_allowed_congestion_control": "reno cubic\n",
	"net/core/default_qdisc":                  "fq_codel\n",
}

func TestReadLimitsFixture(t *testing.T) {
	got, err := readLimits(writeTree(t, sysctlFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{
		RmemMax: 212992, WmemMax: 4194304,
		TCPRmem: [3]int64{4096, 131072, 6291456}, TCPWmem: [3]int64{4096, 16384, 4194304},
		Congestion: "cubic", AvailableCongestion: []string{"reno", "cubic"}, DefaultQdisc: "fq_codel",
	}
	if got.RmemMax != want.RmemMax || got.WmemMax != want.WmemMax || got.TCPRmem != want.TCPRmem ||
		got.TCPWmem != want.TCPWmem || got.Congestion != want.Congestion || got.DefaultQdisc != want.DefaultQdisc ||
		!slices.Equal(got.AvailableCongestion, want.AvailableCongestion) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// A namespace without net.core.rmem_max and a garbled tcp_wmem: both are
// named in the error, and everything else is still read.
func TestReadLimitsPartial(t *testing.T) {
	files := maps.Clone(sysctlFixture)
	delete(files, "net/core/rmem_max")
	files["net/ipv4/tcp_wmem"] = "4096 x 4194304\n"
	got, err := readLimits(writeTree(t, files))
	if err == nil {
		t.Fatal("no error for a missing and a malformed file")
	}
	for _, name := range []string{"rmem_max", "tcp_wmem"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if got.RmemMax != 0 || got.TCPWmem != [3]int64{} {
		t.Errorf("failed fields not zero: %+v", got)
	}
	if got.WmemMax != 4194304 || got.Congestion != "cubic" || got.TCPRmem[2] != 6291456 {
		t.Errorf("readable fields lost: %+v", got)
	}
}

func TestReadLimitsLive(t *testing.T) {
	l, err := ReadLimits()
	if err != nil {
		t.Skipf("this namespace hides some of /proc/sys/net: %v", err)
	}
	if l.RmemMax <= 0 || l.WmemMax <= 0 || l.TCPRmem[2] <= 0 || l.TCPWmem[2] <= 0 {
		t.Errorf("implausible limits %+v", l)
	}
	if l.Congestion == "" || len(l.AvailableCongestion) == 0 || l.DefaultQdisc == "" {
		t.Errorf("missing names %+v", l)
	}
}
