package emit

import (
	"fmt"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpinfo"
	"github.com/wireperf/wireperf/internal/units"
)

// writeMPTCP ends a flow's details with its MPTCP connection as each
// end's kernel saw it: one line per subflow (addresses, bytes moved at
// that end's rate over the stream's span, RTT, retransmits), or the
// fallback to TCP, so that a report never claims MPTCP that did not run.
func writeMPTCP(l *textLines, t *Text, f result.Flow, tag string) {
	for _, end := range []struct {
		s    *result.Stream
		role string
	}{{f.Sent, "sender"}, {f.Received, "receiver"}} {
		if end.s == nil || end.s.MPTCP == nil {
			continue
		}
		for _, line := range mptcpLines(end.s, end.role, t.Opt.Format) {
			l.add("%s %s", tag, line)
		}
	}
}

// mptcpLines are one stream's MPTCP lines.
func mptcpLines(s *result.Stream, role string, format units.Format) []string {
	m := s.MPTCP
	if m.Fallback {
		return []string{fmt.Sprintf("MPTCP (%s): none, the connection ran as plain TCP (MPTCP unavailable on a host, or refused by the peer or a middlebox)", role)}
	}
	head := fmt.Sprintf("MPTCP (%s): %s", role, plural(m.SubflowCount, "subflow"))
	if len(m.Subflows) < m.SubflowCount {
		head += fmt.Sprintf(", %d listed by the kernel", len(m.Subflows))
	}
	if m.SubflowsEarly {
		head += "; closed by the peer before this end's last reading, so as last read while the test ran, and short of its end"
	}
	lines := []string{head}
	for i, sf := range m.Subflows {
		lines = append(lines, "  "+subflowLine(i+1, sf, role == "sender", s.Seconds(), format))
	}
	return lines
}

// subflowLine is one subflow: on a sender, what the peer acknowledged on
// it (the subflows' shares of the stream add up to it, where their bytes
// sent count the data MPTCP sent again on another subflow twice), what
// it sent and its retransmits; on a receiver, what it received; with its
// RTT.
func subflowLine(n int, sf tcpinfo.Subflow, sender bool, seconds float64, format units.Format) string {
	addrs := "addresses not reported"
	if sf.Local != "" || sf.Remote != "" {
		addrs = sf.Local + " -> " + sf.Remote
	}
	bytes, verb := sf.Info.BytesReceived, "received"
	if sender {
		bytes, verb = sf.Info.BytesAcked, "acknowledged"
	}
	transfer, rate := amounts(int64(bytes), seconds, format)
	parts := []string{fmt.Sprintf("subflow %d %s: %s %s (%s)", n, addrs, strings.TrimSpace(transfer), verb, strings.TrimSpace(rate))}
	if sender {
		parts = append(parts, strings.TrimSpace(units.FormatTransfer(float64(sf.Info.BytesSent), format))+" sent")
	}
	if sf.Info.RTTus > 0 {
		parts = append(parts, "RTT "+(time.Duration(sf.Info.RTTus)*time.Microsecond).String())
	}
	if sender {
		parts = append(parts, fmt.Sprintf("%d retransmits", sf.Info.TotalRetrans))
	}
	return strings.Join(parts, ", ")
}
