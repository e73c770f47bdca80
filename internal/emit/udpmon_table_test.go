package emit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/udpmon"
)

// TestUDPMonTableShortfall: a sender asked for 5 µs that sent every 20 µs
// shows the achieved spacing and its p99 gap, marked, and the footer
// warns; a point that held its spacing is not marked.
func TestUDPMonTableShortfall(t *testing.T) {
	sw := &udpmon.Sweep{Server: "b", Count: 1000, Points: []udpmon.Point{
		{Size: 1400, Spacing: 5 * time.Microsecond, Count: 1000, Sent: 1000, AchievedSpacingNs: 20_000,
			AchievedSpacingP99Ns: 46_000, SpacingNotHeld: true},
		{Size: 1400, Spacing: 40 * time.Microsecond, Count: 1000, Sent: 1000, AchievedSpacingNs: 40_100,
			AchievedSpacingP99Ns: 41_000},
	}}
	var b bytes.Buffer
	if err := (&UDPMonTable{W: &b}).Write(sw); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"gap p99", "20.00us!", "46.00us", "40.10us ", "41.00us",
		"size 1400, spacing 5µs: WARNING: the sender could not hold the spacing: it sent every 20.00 µs on average (p99 46.00 µs)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "spacing 40µs: WARNING") {
		t.Errorf("a held spacing warned:\n%s", out)
	}
}
