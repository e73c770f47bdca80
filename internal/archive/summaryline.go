package archive

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/units"
)

// Line is a run's result in one line, in iperf's units: "941 Mbits/sec
// received, 0 retransmits".
func (m Summary) Line() string {
	var parts []string
	if m.ReceivedBps != nil {
		parts = append(parts, strings.TrimSpace(units.FormatRate(*m.ReceivedBps, 'a'))+" received")
	} else if m.SentBps != nil {
		parts = append(parts, strings.TrimSpace(units.FormatRate(*m.SentBps, 'a'))+" sent")
	}
	// A probe's times (ping's RTT, tcp-connect's handshake) read as rr's.
	p50, p99 := m.RRp50us, m.RRp99us
	if p50 == nil || p99 == nil {
		p50, p99 = m.ProbeP50us, m.ProbeP99us
	}
	if p50 != nil && p99 != nil {
		parts = append(parts, fmt.Sprintf("RTT p50 %.1f us, p99 %.1f us", *p50, *p99))
	}
	if m.Retransmits != nil {
		parts = append(parts, fmt.Sprintf("%d retransmits", *m.Retransmits))
	}
	if m.LostPercent != nil {
		parts = append(parts, fmt.Sprintf("%.3g%% lost", *m.LostPercent))
	}
	if m.JitterMs != nil {
		parts = append(parts, fmt.Sprintf("jitter %.3f ms", *m.JitterMs))
	}
	if len(parts) == 0 {
		return "finished"
	}
	return strings.Join(parts, ", ")
}
