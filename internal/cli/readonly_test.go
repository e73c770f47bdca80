package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readOnlyCommands are the commands that only read the archive, each
// with --db {db} and an output (if any) under {out}.
var readOnlyCommands = [][]string{
	{"runs", "--db", "{db}"},
	{"show", "0123abcd", "--db", "{db}"},
	{"table", "--db", "{db}", "--campaign", "grid", "--rows", "parallel", "--cols", "window"},
	{"plot", "sweep", "--db", "{db}", "--campaign", "grid", "--x", "window", "--series", "parallel", "-o", "{out}/sweep.svg"},
	{"plot", "heatmap", "--db", "{db}", "--campaign", "grid", "--x", "window", "--y", "parallel", "-o", "{out}/heat.svg"},
	{"plot", "timeline", "--db", "{db}", "--run", "0123abcd", "-o", "{out}/timeline.svg"},
	{"plot", "udpmon", "--db", "{db}", "--campaign", "um", "-o", "{out}/udpmon.svg"},
	{"report", "--db", "{db}", "--campaign", "grid", "-o", "{out}/report"},
	{"schedule", "--db", "{db}"},
	{"task", "list", "--db", "{db}"},
}

func withPaths(args []string, db, out string) []string {
	r := strings.NewReplacer("{db}", db, "{out}", out)
	got := make([]string, len(args))
	for i, a := range args {
		got[i] = r.Replace(a)
	}
	return got
}

// entries lists what dir holds.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// refusedInOneLine fails the test unless the command exited 2 with one
// line of stderr that says each of want.
func refusedInOneLine(t *testing.T, args []string, code int, stderr string, want ...string) {
	t.Helper()
	if code != ExitUsage || strings.Count(stderr, "\n") != 1 {
		t.Errorf("%q: exit %d, stderr %q; want exit %d and one line", args, code, stderr, ExitUsage)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("%q: %q does not say %q", args, stderr, w)
		}
	}
}

func TestReadOnlyCommandsCreateNoArchive(t *testing.T) {
	for _, args := range readOnlyCommands {
		for _, missing := range []string{"wireperf.db", "sub/wireperf.db", "sqlite:wireperf.db"} {
			t.Run(strings.Join(args[:2], " ")+" "+missing, func(t *testing.T) {
				dir := t.TempDir()
				db := filepath.Join(dir, strings.TrimPrefix(missing, "sqlite:"))
				if strings.HasPrefix(missing, "sqlite:") {
					db = "sqlite:" + db
				}
				argv := withPaths(args, db, dir)
				code, _, stderr := runCLI(argv...)
				refusedInOneLine(t, argv, code, stderr, "archive "+db+": no such file", "only reads")
				if got := entries(t, dir); len(got) != 0 {
					t.Errorf("%q left %q", argv, got)
				}
			})
		}
	}
}

// With neither --db nor $WIREPERF_DB a reader looks for the default
// archive, and creates neither it nor its directory.
func TestReadOnlyCommandLeavesTheDefaultArchiveUncreated(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", dir)
	t.Setenv("WIREPERF_DB", "")
	code, _, stderr := runCLI("runs")
	refusedInOneLine(t, []string{"runs"}, code, stderr, filepath.Join(dir, "wireperf", "wireperf.db"), "no directory")
	if got := entries(t, dir); len(got) != 0 {
		t.Errorf("left %q", got)
	}
}

// An unknown scheme is refused by readers and writers, naming the schemes
// wireperf reads, and makes no file of the DSN.
func TestUnknownDBSchemeRefused(t *testing.T) {
	logDir := t.TempDir()
	log := filepath.Join(logDir, "run.json")
	if err := os.WriteFile(log, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	commands := append([][]string{{"import", log, "--db", "{db}"}}, readOnlyCommands...)
	for _, args := range commands {
		argv := withPaths(args, "mysql://x/y", dir)
		code, _, stderr := runCLI(argv...)
		refusedInOneLine(t, argv, code, stderr, `unknown scheme "mysql"`, "file path", "sqlite:PATH", "postgres://")
		if got := entries(t, dir); len(got) != 0 {
			t.Errorf("%q left %q", argv, got)
		}
	}
	if got := entries(t, logDir); len(got) != 1 {
		t.Errorf("the log's directory holds %q", got)
	}
}
