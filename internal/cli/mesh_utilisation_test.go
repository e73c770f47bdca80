package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// meshFile writes a mesh of n hosts h0 … h(n−1) in one group (a full
// mesh, or sampled with K partners: group "sampled K"), running
// `client -t 10` every repeat.
func meshFile(t *testing.T, n int, group, repeat string) string {
	var b strings.Builder
	b.WriteString("name: scale\nhosts:\n")
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("h%d", i)
		fmt.Fprintf(&b, "  %s:\n", names[i])
	}
	list := "[" + strings.Join(names, ", ") + "]"
	if k, ok := strings.CutPrefix(group, "sampled "); ok {
		fmt.Fprintf(&b, "groups:\n  all: {sampled: {hosts: %s, partners: %s}}\n", list, k)
	} else {
		fmt.Fprintf(&b, "groups:\n  all: {mesh: %s}\n", list)
	}
	fmt.Fprintf(&b, "tests:\n  tput: {test: client -t 10}\nschedules:\n  - {group: all, test: tput, repeat: %s}\n", repeat)
	f := filepath.Join(t.TempDir(), "scale.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A full mesh of 50 hosts running 10 s throughput tests every 10 minutes
// is refused (one line naming a host and its utilisation, exit 2,
// nothing changed); its sampled form (a rotating task per host) is
// applied, and applied again changes nothing.
func TestMeshApplyRefusesAnOverfullMesh(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	if code, out, errOut := runCLI("mesh", "apply", "../../examples/mesh-3hosts.yaml", "--db", db); code != ExitOK {
		t.Fatalf("example: %d %q %q", code, out, errOut)
	}
	_, before, _ := runCLI("task", "list", "--db", db)

	full := meshFile(t, 50, "mesh", "10m")
	code, out, errOut := runCLI("mesh", "apply", full, "--db", db)
	want := "wireperf: " + full + ":58:5: schedules[0]: host h0 would be busy 196.0% of the time with exclusive runs, over 100.0%: " +
		"98 runs of all/tput every 10m0s, each holding it 12s (the test's length + 2s margin); sample partners (a sampled group) or repeat less often\n"
	if code != ExitUsage || out != "" || errOut != want {
		t.Fatalf("full mesh: %d %q\n got %q\nwant %q", code, out, errOut, want)
	}
	if _, after, _ := runCLI("task", "list", "--db", db); after != before {
		t.Fatalf("a refused mesh changed the tasks:\n%s", after)
	}

	// --dry-run shows the utilisation, and is refused the same way.
	code, out, errOut = runCLI("mesh", "apply", full, "--dry-run")
	if code != ExitUsage || errOut != want || !strings.Contains(out, "\nutilisation of each host by exclusive runs (busy time ÷ period), worst first:\nh0 196.0%: 98 runs") {
		t.Fatalf("dry run: %d %q %q", code, errOut, out[max(0, len(out)-300):])
	}

	sampled := meshFile(t, 50, "sampled 1", "10m")
	code, out, errOut = runCLI("mesh", "apply", sampled, "--db", db)
	if code != ExitOK || errOut != "" || out != "mesh scale: 50 tasks: 50 added, 0 updated, 0 unchanged, 0 removed\n" {
		t.Fatalf("sampled: %d %q %q", code, out, errOut)
	}
	code, out, _ = runCLI("mesh", "apply", sampled, "--db", db)
	if code != ExitOK || out != "mesh scale: 50 tasks: 0 added, 0 updated, 50 unchanged, 0 removed\n" {
		t.Fatalf("sampled again: %d %q", code, out)
	}
	code, out, _ = runCLI("mesh", "apply", sampled, "--dry-run")
	if code != ExitOK || !strings.Contains(out, "\nh0 4.0%: 2 runs of all/tput every 10m0s, each holding it 12s (the test's length + 2s margin)\n") {
		t.Fatalf("sampled dry run: %d %q", code, out[max(0, len(out)-300):])
	}
}

// Over 50% the mesh is applied with one line of warning on stderr.
func TestMeshApplyWarnsOverHalf(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	f := meshFile(t, 3, "mesh", "80s") // 4 runs of 12 s in 80 s: 60%
	code, out, errOut := runCLI("mesh", "apply", f, "--db", db)
	if code != ExitOK || !strings.Contains(out, "6 added") || strings.Count(errOut, "\n") != 1 ||
		!strings.HasPrefix(errOut, "wireperf: warning: "+f+":11:5: schedules[0]: host h0 is busy 60.0% of the time with exclusive runs, over 50.0%") {
		t.Fatalf("%d %q %q", code, out, errOut)
	}
}
