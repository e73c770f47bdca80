package emit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// withMPTCP gives the sending stream of r two subflows and the receiving
// one a fallback to TCP.
func withMPTCP(r *result.Result) *result.Result {
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := range e.Streams {
			s := &e.Streams[i]
			if !s.Sender {
				s.MPTCP = &tcpinfo.MPTCP{Fallback: true}
				continue
			}
			s.MPTCP = &tcpinfo.MPTCP{SubflowCount: 3, Subflows: []tcpinfo.Subflow{
				{Local: "10.0.1.1:40000", Remote: "10.0.1.2:5201", Info: tcpinfo.Info{BytesSent: 500e6, BytesAcked: 490e6, RTTus: 1500, TotalRetrans: 4}},
				{Info: tcpinfo.Info{BytesSent: 250e6, BytesAcked: 250e6, RTTus: 20000}},
			}}
		}
	}
	return r
}

// The summary ends with a line per subflow, and says plainly that a
// connection ran as TCP; -J carries the same under each stream's "mptcp".
func TestTextMPTCP(t *testing.T) {
	r := withMPTCP(forwardResult())
	out := summaryText(t, r)
	for _, want := range []string{
		"[  1] MPTCP (sender): 3 subflows, 2 listed by the kernel",
		"[  1]   subflow 1 10.0.1.1:40000 -> 10.0.1.2:5201: 467 MBytes acknowledged (",
		"), 477 MBytes sent, RTT 1.5ms, 4 retransmits",
		"[  1]   subflow 2 addresses not reported: 238 MBytes acknowledged (",
		"[  1] MPTCP (receiver): none, the connection ran as plain TCP",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(summaryText(t, forwardResult()), "MPTCP") {
		t.Error("a test without MPTCP mentions it")
	}

	var b bytes.Buffer
	if err := (&JSON{W: &b}).Summary(r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Wireperf struct {
			Result result.Result `json:"result"`
		} `json:"wireperf"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Wireperf.Result.Local.Streams {
		if s.MPTCP == nil || s.Sender && len(s.MPTCP.Subflows) != 2 || !s.Sender && !s.MPTCP.Fallback {
			t.Errorf("-J stream %d (sender %v): mptcp %+v", s.ID, s.Sender, s.MPTCP)
		}
	}
}

// Subflows read before the sender drained, because the peer closed the
// connection first, are said to be so, in text and in -J.
func TestTextMPTCPSubflowsEarly(t *testing.T) {
	r := withMPTCP(forwardResult())
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := range e.Streams {
			if m := e.Streams[i].MPTCP; m != nil && !m.Fallback {
				m.SubflowsEarly = true
			}
		}
	}
	if out := summaryText(t, r); !strings.Contains(out, "[  1] MPTCP (sender): 3 subflows, 2 listed by the kernel; closed by the peer before this end's last reading") {
		t.Errorf("the summary does not say the subflows were read early:\n%s", out)
	}
	var b bytes.Buffer
	if err := (&JSON{W: &b}).Summary(r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"subflows_early": true`) {
		t.Errorf("-J lacks subflows_early: %s", b.String())
	}
	if out := summaryText(t, withMPTCP(forwardResult())); strings.Contains(out, "closed by the peer") {
		t.Error("subflows read at the end are said to be early")
	}
}
