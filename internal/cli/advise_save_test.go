package cli

import (
	"bytes"
	"encoding/json"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// advise --save stores its report as a run of the campaign, and the
// campaign's report page shows its verdict and advice.
func TestAdviseSaveAndReport(t *testing.T) {
	eachArchive(t, adviseSaveAndReport)
}

func adviseSaveAndReport(t *testing.T, port, db string) {
	if code, out, stderr := runCLI("sweep", "127.0.0.1", "-p", port, "-P", "1,2", "-t", "0.2", "--name", "g", "--db", db, "-q"); code != ExitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr := runCLI("advise", "127.0.0.1", "-p", port, "-t", "0.5", "-P", "2", "--probes", "2", "-J",
		"--save", "--db", db, "--campaign", "g")
	if code != ExitOK {
		t.Fatalf("advise: exit %d: %s", code, stderr)
	}
	var printed struct {
		Verdict struct {
			Limit, Summary string
		} `json:"verdict"`
		Advice struct{ Steps []string } `json:"advice"`
	}
	if err := json.Unmarshal([]byte(out), &printed); err != nil || printed.Verdict.Limit == "" {
		t.Fatalf("advise -J: %v\n%s", err, out)
	}
	var id string
	for _, r := range listRuns(t, "--db", db, "--campaign", "g") {
		if r.Source == "advise" {
			if id != "" {
				t.Fatalf("two advise runs stored")
			}
			id = r.ID
			if r.State != "finished" || len(r.Summary) != 0 || len(r.Axes) != 0 {
				t.Errorf("the advise run: %+v", r)
			}
		}
	}
	if id == "" || !strings.Contains(stderr, "stored as run "+id) {
		t.Fatalf("no advise run stored (stderr %q)", stderr)
	}
	// The document is the -J output, byte for byte.
	if code, doc, stderr := runCLI("show", "--db", db, id, "-J"); code != ExitOK || !bytes.Equal([]byte(doc), []byte(out)) {
		t.Errorf("show %s -J: exit %d %s; the stored document differs from the printed one", id, code, stderr)
	}
	// Without -J, show prints advise's own text report with its verdict.
	if code, text, stderr := runCLI("show", "--db", db, id); code != ExitOK ||
		!strings.Contains(text, "Verdict: ") || !strings.Contains(text, printed.Verdict.Summary) {
		t.Errorf("show %s: exit %d %s; want advise's text report with the verdict %q:\n%s", id, code, stderr, printed.Verdict.Summary, text)
	}
	// The campaign's table leaves the report out: two cells, one run each.
	code, tab, stderr := runCLI("table", "--db", db, "--campaign", "g", "--rows", "parallel", "--format", "json")
	var table struct {
		Cells []struct{ N int } `json:"cells"`
	}
	if code != ExitOK || json.Unmarshal([]byte(tab), &table) != nil || len(table.Cells) != 2 || table.Cells[0].N != 1 || table.Cells[1].N != 1 {
		t.Errorf("table: exit %d %s\n%s", code, stderr, tab)
	}
	for _, args := range [][]string{{"--campaign", "g"}, {"--run", id}} {
		dir := t.TempDir()
		if code, _, stderr := runCLI(append([]string{"report", "--db", db, "-o", dir}, args...)...); code != ExitOK {
			t.Fatalf("report %v: exit %d: %s", args, code, stderr)
		}
		page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
		html := string(page)
		if !strings.Contains(html, "<h3>Verdicts</h3>") || !strings.Contains(html, ": "+printed.Verdict.Limit) {
			t.Errorf("report %v: no verdict %q on the page", args, printed.Verdict.Limit)
		}
		for _, step := range printed.Advice.Steps {
			if !strings.Contains(html, "what to do: "+template.HTMLEscapeString(step)) {
				t.Errorf("report %v: the advice %q is not on the page", args, step)
			}
		}
	}
}

func TestAdviseSaveBadInput(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--campaign", "g"}, "give --save"},
		{[]string{"--db", db}, "give --save"},
		{[]string{"--save", "--db", db, "--campaign", "nope"}, `no campaign "nope"`},
	} {
		// No server listens on port 9: anything past the checks would fail
		// otherwise.
		args := append([]string{"advise", "127.0.0.1", "-p", "9"}, tc.args...)
		code, _, stderr := runCLI(args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
}
