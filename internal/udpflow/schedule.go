package udpflow

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// cpuPercent is cpu over wall, in % of one core; 0 where unknown.
func cpuPercent(cpu0, cpu1 time.Duration, wall time.Duration) float64 {
	if cpu0 < 0 || cpu1 < 0 || wall <= 0 {
		return 0
	}
	return 100 * float64(cpu1-cpu0) / float64(wall)
}

// Thresholds of scheduleLimit.
const (
	heldFraction = 0.99 // a sender within 1 % of its rate held it
	cpuBoundPct  = 90   // a thread this busy had no time to spare
)

// scheduleLimit names what held a sender back when it sent less than
// heldFraction of its rate; "" when it held it. The causes are tried from
// the one that explains the most: a saturated thread, then a full queue,
// then send calls slower than their slot, then a thread that was ready
// to send but was not given a CPU in time (stalls beyond the debt bound).
func scheduleLimit(s *result.Schedule) string {
	if s.RequestedBps <= 0 || s.SentBps >= heldFraction*s.RequestedBps {
		return ""
	}
	switch {
	case s.CPUPercent >= cpuBoundPct && !s.Spin: // spinning fills a core by design
		return "CPU-bound"
	case s.BufferFull > 0:
		return "socket buffer full"
	case s.Sends > 0 && s.SlowSends*10 >= s.Sends:
		return "slow send calls"
	case s.WrittenOff > 0:
		return "descheduled"
	}
	return "unknown"
}
