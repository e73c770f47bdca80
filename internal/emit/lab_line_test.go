package emit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// labLine is what lab.RouterWatch.Line says of a lab's host.
const labLine = `run through the lab "wan": this host's TCP buffers are stock Linux (tcp_rmem 4096 131072 6291456, tcp_wmem 4096 16384 4194304)`

// Every text report run through a lab names its hosts' TCP buffers once,
// beside the router's check; the client's, rr's and udpmon's here (group's
// and advise's in their packages).
func TestReportsNameTheLabsBuffersOnce(t *testing.T) {
	client := forwardResult()
	client.Lab = labLine
	client.Warnings = []string{`the lab "wan"'s router fell behind`}
	var text, js bytes.Buffer
	if err := (&Text{W: &text}).Summary(client); err != nil {
		t.Fatal(err)
	}
	if err := (&JSON{W: &js}).Write(client); err != nil {
		t.Fatal(err)
	}
	rr := &result.Result{Local: result.End{RR: &result.RR{}}, Lab: labLine}
	var rrText bytes.Buffer
	if err := (&RRText{W: &rrText}).Write(rr); err != nil {
		t.Fatal(err)
	}
	var um bytes.Buffer
	if err := (&UDPMonTable{W: &um}).Write(&udpmon.Sweep{Server: "b", Lab: labLine}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"client": text.String(), "rr": rrText.String(), "udpmon": um.String()} {
		if n := strings.Count(out, labLine); n != 1 {
			t.Errorf("%s: the lab's line %d times, want once:\n%s", name, n, out)
		}
	}
	if !strings.Contains(js.String(), `"lab": "run through the lab \"wan\"`) {
		t.Errorf("-J lacks the lab: %s", js.String())
	}
	// Outside a lab, no line.
	var plain bytes.Buffer
	if err := (&Text{W: &plain}).Summary(forwardResult()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "run through the lab") {
		t.Errorf("a test outside a lab names one:\n%s", plain.String())
	}
}
