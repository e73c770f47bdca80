package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMeshImportThenApply: a perfSONAR template imported to a file that
// mesh apply takes, the warnings on stderr one a line, and bad input one
// line with exit status 2.
func TestMeshImportThenApply(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "mesh.yaml")
	tpl := "../psconfig/testdata/perfsonar/example-3-circuits.json"
	code, stdout, stderr := runCLI("mesh", "import", "--psconfig", tpl, "-o", out)
	if code != ExitOK || stdout != "" {
		t.Fatalf("import: exit %d, %q %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "wireperf: warning: addresses.*.remote-addresses") || !strings.Contains(stderr, "18 hosts, 2 schedules written to "+out) {
		t.Errorf("stderr: %q", stderr)
	}
	db := filepath.Join(dir, "a.db")
	code, stdout, stderr = runCLI("mesh", "apply", "-f", out, "--db", db)
	// 40 pairs of the throughput group and 40 of the latency group.
	if code != ExitOK || !strings.Contains(stdout, "mesh example-3-circuits: 80 tasks: 80 added") {
		t.Fatalf("apply: exit %d, %q %q", code, stdout, stderr)
	}
	// To stdout, the same bytes.
	code, stdout, _ = runCLI("mesh", "import", "--psconfig", tpl)
	written, err := os.ReadFile(out)
	if err != nil || code != ExitOK || stdout != string(written) {
		t.Errorf("stdout differs from the file written (exit %d, %v)", code, err)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"addresses": {}, "addresses": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mesh", "import"}, "wireperf: mesh import needs a template: --psconfig FILE\n"},
		{[]string{"mesh", "import", "--psconfig", bad}, "wireperf: pSConfig template: at addresses: the key \"addresses\" twice in one object\n"},
	} {
		if code, _, errOut := runCLI(c.args...); code != ExitUsage || errOut != c.want {
			t.Errorf("%q: exit %d, %q; want exit 2, %q", c.args, code, errOut, c.want)
		}
	}
}
