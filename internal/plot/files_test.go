package plot

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// writeDoc writes a -J document of kind ("" for a client's) holding res.
func writeDoc(t *testing.T, name, kind string, res *result.Result) string {
	t.Helper()
	var doc any = map[string]any{"wireperf": map[string]any{"result": res}}
	if kind != "" {
		doc = map[string]any{"kind": kind, "result": res}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A file draws the figures its document has, named by the file; another
// figure is a DocumentError that says which document it needs.
func TestFileFigure(t *testing.T) {
	bulk := writeDoc(t, "bulk.json", "", tcpRun())
	rr := writeDoc(t, "rr.json", "rr", rrRun())
	fig, err := FileFigure("timeline", bulk)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Kind != "timeline" || !strings.HasPrefix(fig.Footer.String(), "bulk.json") {
		t.Errorf("a %s figure, footer %q", fig.Kind, fig.Footer.String())
	}
	if fig, err := FileFigure("latency", rr); err != nil || fig.Kind != "latency" {
		t.Errorf("latency of an rr run: %v", err)
	}
	_, err = FileFigure("latency", bulk)
	var de *DocumentError
	if !errors.As(err, &de) || err.Error() != bulk+" is a client or server -J output; plot latency needs an rr -J output" {
		t.Errorf("latency of a bulk run: %v", err)
	}
	if _, err := FileFigure("timeline", filepath.Join(t.TempDir(), "missing.json")); err == nil || errors.As(err, &de) {
		t.Errorf("a missing file: %v; want an error that is not about the document's kind", err)
	}
}

// Compared files are labelled by their names without the extension;
// every file must hold the figure's document.
func TestCompareFiles(t *testing.T) {
	a, b := writeDoc(t, "before.json", "", tcpRun()), writeDoc(t, "after.json", "", tcpRun())
	fig, err := CompareFiles("timeline", []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range fig.Panels[0].Series {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "before") || !strings.Contains(got, "after") {
		t.Errorf("series %q, want before and after", got)
	}
	var de *DocumentError
	if _, err := CompareFiles("latency", []string{a, b}); !errors.As(err, &de) {
		t.Errorf("latency of bulk runs: %v", err)
	}
	if _, err := CompareFiles("load", []string{a, b}); err == nil || !strings.Contains(err.Error(), "timeline, latency, udpmon") {
		t.Errorf("an unknown comparison: %v", err)
	}
}
