package session

import (
	"sync"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
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
