package emit

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// An rr test run through a lab whose router fell behind says so, in text
// and JSON.
func TestRRReportCarriesTheLabsWarning(t *testing.T) {
	const w = `the lab "wan"'s router fell behind`
	r := &result.Result{Local: result.End{RR: &result.RR{}}, Warnings: []string{w}}
	var text, js strings.Builder
	if err := (&RRText{W: &text}).Write(r); err != nil {
		t.Fatal(err)
	}
	if err := (&RRJSON{W: &js}).Write(r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "WARNING: "+w) {
		t.Errorf("text lacks the warning:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"warnings"`) {
		t.Errorf("JSON lacks the warning:\n%s", js.String())
	}
}
