package archive

import "testing"

func TestSummaryLine(t *testing.T) {
	t.Parallel()
	rate, p50, p99, lost := 941.2e6, 31.2, 80.4, 0.5
	var zero int64
	for _, c := range []struct {
		m    Summary
		want string
	}{
		{Summary{ReceivedBps: &rate, Retransmits: &zero}, "941 Mbits/sec received, 0 retransmits"},
		{Summary{SentBps: &rate}, "941 Mbits/sec sent"},
		{Summary{RRp50us: &p50, RRp99us: &p99, LostPercent: &lost}, "RTT p50 31.2 us, p99 80.4 us, 0.5% lost"},
		{Summary{}, "finished"},
	} {
		if got := c.m.Line(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
