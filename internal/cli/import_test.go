package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

func TestImportStoresEachLogOnce(t *testing.T) {
	const dir = "../logimport/testdata"
	for name, db := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runCLI("import", "--db", db, dir)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			imported := 0
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "imported ") {
					imported++
				}
			}
			if imported < 10 || strings.Contains(out, "skipped") {
				t.Fatalf("%d runs imported:\n%s", imported, out)
			}
			runs := listRuns(t, "--db", db)
			if len(runs) != imported {
				t.Fatalf("%d runs stored, %d reported", len(runs), imported)
			}
			sources := map[string]int{}
			for _, r := range runs {
				sources[r.Source]++
			}
			if sources["iperf2-text"] < 8 || sources["iperf3-json"] != 1 || sources["wireperf-json"] != 1 {
				t.Errorf("sources %v", sources)
			}
			code, out, _ = runCLI("import", "--db", db, dir)
			if code != 0 || strings.Contains(out, "\nimported ") || strings.HasPrefix(out, "imported ") || !strings.Contains(out, "0 runs stored") {
				t.Errorf("second import: exit %d\n%s", code, out)
			}
			if again := listRuns(t, "--db", db); len(again) != len(runs) {
				t.Errorf("%d runs after importing twice, want %d", len(again), len(runs))
			}
			code, out, _ = runCLI("table", "--db", db, "--where", "source=iperf2-text", "--where", "proto=tcp",
				"--rows", "window", "--cols", "time", "--value", "sent_bits_per_second", "--format", "json")
			var tab struct {
				Cells []struct{ N int } `json:"cells"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &tab) != nil || len(tab.Cells) < 3 {
				t.Errorf("table of imported logs: exit %d\n%s", code, out)
			}
			code, out, _ = runCLI("show", "--db", db, runs[0].ID)
			if code != 0 || len(out) == 0 {
				t.Errorf("show of an imported log: exit %d", code)
			}
		})
	}
}

// A file named that is not a log is an error, in one line naming the kinds
// import reads; under a directory it is skipped with a note. Counts of one
// are singular.
func TestImportRefusesANamedFileThatIsNotALog(t *testing.T) {
	dir := t.TempDir()
	db := dir + "/a.db"
	code, out, stderr := runCLI("import", "--db", db, "import_test.go")
	want := "wireperf: import_test.go: not a log import reads (iperf2 text or -y C, iperf3 -J, wireperf -J): no iperf report lines"
	if code != ExitFailed || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 || strings.Contains(out, "skipped") {
		t.Errorf("a named file that is not a log: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = runCLI("import", "--db", db, dir+"/nope.txt")
	if code != ExitUsage || !strings.Contains(stderr, "nope.txt") {
		t.Errorf("a missing file: exit %d, %s", code, stderr)
	}
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{"import_test.go": "notes.txt", "../logimport/testdata/iperf2-long-tcp.txt": "run.txt"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(logs, dst), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr = runCLI("import", "--db", db, logs)
	if code != 0 || !strings.Contains(out, "skipped "+filepath.Join(logs, "notes.txt")+": no iperf report lines") ||
		!strings.Contains(out, "1 run stored from 1 file (0 imported before, 1 not a log) in ") {
		t.Errorf("a directory with a log and a file that is not: exit %d\n%s%s", code, out, stderr)
	}
}

func TestRunsFilters(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	db := t.TempDir() + "/a.db"
	if code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "-t", "0.2", "-P", "1,2", "--name", "f", "--db", db, "-q"); code != 0 {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, _ := runCLI("import", "--db", db, "../logimport/testdata/iperf2-long-tcp.txt"); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 3},
		{[]string{"--since", "1h"}, 2}, // the imported log has no start time
		{[]string{"--host", "196.32.210"}, 1},
		{[]string{"--where", "parallel=2"}, 1},
		{[]string{"--where", "source=native", "--where", "parallel=1"}, 1},
		{[]string{"--campaign", "f"}, 2},
	} {
		if got := len(listRuns(t, append([]string{"--db", db}, c.args...)...)); got != c.want {
			t.Errorf("runs %v: %d runs, want %d", c.args, got, c.want)
		}
	}
	if code, _, stderr := runCLI("runs", "--db", db, "--where", "colour=red"); code != ExitUsage || !strings.Contains(stderr, "colour") {
		t.Errorf("--where on an unknown key: exit %d %s", code, stderr)
	}
}
