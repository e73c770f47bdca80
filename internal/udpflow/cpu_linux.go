package udpflow

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time; -1 where unknown. The
// caller keeps its goroutine locked to the thread between two readings.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return time.Duration(ts.Nano())
}
