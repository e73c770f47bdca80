package session

import (
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// lockedConn serialises frames written from several goroutines.
type frameWriter struct {
	mu sync.Mutex
	w  interface{ Write([]byte) (int, error) }
}

func (fw *frameWriter) send(t proto.Type, body any) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return proto.WriteFrame(fw.w, t, body)
}

// withoutIntervals is an end's final report as it travels: the intervals
// went live already, and a long test has too many to resend.
func withoutIntervals(e result.End) result.End {
	e.Intervals = nil
	return e
}

// drainFor is how long receivers keep reading once the peer's senders have
// stopped. TCP delivers everything it accepted, however long that takes
// on a slow path, so it gets the long bound; UDP data still in flight
// arrives within a few round trips or not at all.
func drainFor(s spec.Spec, controlRTT time.Duration) time.Duration {
	if s.Protocol != spec.UDP {
		return drainTimeout
	}
	return min(5*time.Second, 4*controlRTT+250*time.Millisecond)
}
