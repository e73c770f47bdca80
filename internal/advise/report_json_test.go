package advise

import (
	"encoding/json"
	"strings"
	"testing"
)

// The -J document is indented, keeps <, > and & as they are, and reads
// back to the same report.
func TestReportJSON(t *testing.T) {
	r := &Report{Target: "h:5201", Direction: "client → server", ProbeMethod: "connect <1 ms> & kernel"}
	doc, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	if !strings.Contains(s, "\n  \"target\": \"h:5201\"") || !strings.Contains(s, "connect <1 ms> & kernel") || !strings.HasSuffix(s, "}\n") {
		t.Errorf("document:\n%s", s)
	}
	var back Report
	if err := json.Unmarshal(doc, &back); err != nil || back.Target != r.Target || back.ProbeMethod != r.ProbeMethod {
		t.Errorf("read back %+v, %v", back, err)
	}
}
