package emit

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

func TestTCPTimelineCSV(t *testing.T) {
	r := withTCPInternals(reverseResult())
	var b bytes.Buffer
	if err := WriteTCPTimelineCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 31 {
		t.Fatalf("%d rows, want a header and 30 samples", len(rows))
	}
	if strings.Join(rows[0][:5], ",") != "stream,direction,sender_role,t,rtt_us" || len(rows[0]) != len(tcpTimelineColumns) {
		t.Errorf("header %q", rows[0])
	}
	if got := strings.Join(rows[1][:5], ","); got != "1,server→client,server,0.100000,21000" {
		t.Errorf("first row %q", got)
	}
	for _, row := range rows {
		if len(row) != len(rows[0]) {
			t.Fatalf("row %q has %d fields", row, len(row))
		}
	}
	b.Reset()
	if err := WriteTCPTimelineCSV(&b, forwardResult()); err != nil || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("no timelines should give the header alone: %q, %v", b.String(), err)
	}
}
