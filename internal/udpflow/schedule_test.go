package udpflow

import (
	"runtime"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

func TestScheduleLimit(t *testing.T) {
	tests := []struct {
		name string
		s    result.Schedule
		want string
	}{
		{"unpaced", result.Schedule{SentBps: 5}, ""},
		{"held", result.Schedule{RequestedBps: 100, SentBps: 99, CPUPercent: 100}, ""},
		{"CPU first", result.Schedule{RequestedBps: 100, SentBps: 64, CPUPercent: 99, BufferFull: 5}, "CPU-bound"},
		{"full queue", result.Schedule{RequestedBps: 100, SentBps: 64, CPUPercent: 40, BufferFull: 5}, "socket buffer full"},
		{"slow sends", result.Schedule{RequestedBps: 100, SentBps: 64, CPUPercent: 40, Sends: 100, SlowSends: 10}, "slow send calls"},
		{"a few slow sends explain nothing", result.Schedule{RequestedBps: 100, SentBps: 64, Sends: 100, SlowSends: 9}, "unknown"},
		{"stalls", result.Schedule{RequestedBps: 100, SentBps: 64, WrittenOff: 3}, "descheduled"},
		{"a spinning sender is busy by design", result.Schedule{RequestedBps: 100, SentBps: 64, CPUPercent: 99, Spin: true}, "unknown"},
	}
	for _, tc := range tests {
		if got := scheduleLimit(&tc.s); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSenderHoldsRate sends 40 Mbit/s of 1,000-byte datagrams for 300 ms
// on loopback. Every datagram the schedule made due was sent, written off
// (a stall beyond the debt bound), or is still owed (at most the bound);
// a sender that fell short names a cause, one that did not holds the rate.
// On a busy machine the thread may be starved; the counts must add up
// all the same.
func TestSenderHoldsRate(t *testing.T) {
	sc, _ := loopback.UDPPair(t)
	cfg := pace.ForRate(40e6, 1000, 1)
	rule := pace.NewRateRule(cfg)
	s, err := NewSender(sc, SenderConfig{Size: 1000, Pace: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Start(start, nil)
	timer := time.NewTimer(300 * time.Millisecond)
	<-timer.C
	s.Stop()
	<-s.Done()
	el := time.Since(start)
	sch := s.Schedule()
	if sch == nil || sch.RequestedBps != 40e6 || sch.Sends == 0 {
		t.Fatalf("schedule %+v", sch)
	}
	t.Logf("in %v: schedule %+v, spacing %+v", el, *sch, *s.Spacing())
	due := int64(el.Seconds()*5000) + 1
	// Never ahead of the schedule. (How far behind it ends depends on
	// when the thread last ran before Stop: the exact catch-up and
	// write-off rule is pace's TestRateRule, on an injected clock.)
	if got := s.Sent() + sch.WrittenOff; got > due+rule.Cap {
		t.Errorf("sent %d + written off %d for %d due: ahead of the schedule", s.Sent(), sch.WrittenOff, due)
	}
	held := sch.SentBps >= 0.99*sch.RequestedBps
	if held != (sch.Limit == "") {
		t.Errorf("sent %.0f of %.0f bit/s, limit %q", sch.SentBps, sch.RequestedBps, sch.Limit)
	}
	if sch.Limit == "" && s.Sent() < due*97/100 {
		t.Errorf("no limit named, yet %d of %d sent", s.Sent(), due)
	}
	if runtime.GOOS == "linux" && sch.CPUPercent <= 0 {
		t.Errorf("no CPU figure: %v", sch.CPUPercent)
	}
}
