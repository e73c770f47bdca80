package control

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
)

// WriteTimeout bounds every control write: a peer that stops reading
// costs its test, never a goroutine held forever.
const WriteTimeout = 5 * time.Second

// AbortWrite bounds the last words to a peer on the way out of an
// aborted test.
const AbortWrite = 250 * time.Millisecond

// frameWriter serialises frames written from several goroutines, each
// under its own write deadline. After a failed write the connection's
// framing is lost, so every later send fails at once.
type frameWriter struct {
	mu     sync.Mutex
	w      net.Conn
	broken error
}

func newFrameWriter(c net.Conn) *frameWriter { return &frameWriter{w: c} }

func (fw *frameWriter) send(t proto.Type, body any) error {
	return fw.sendWithin(t, body, WriteTimeout)
}

// sendWithin sends under a shorter bound, for messages on the way out of
// a test that is being aborted.
func (fw *frameWriter) sendWithin(t proto.Type, body any, d time.Duration) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.broken != nil {
		return fw.broken
	}
	_ = fw.w.SetWriteDeadline(time.Now().Add(d))
	if err := proto.WriteFrame(fw.w, t, body); err != nil {
		fw.broken = fmt.Errorf("writing %v: %w", t, err)
		return fw.broken
	}
	return nil
}

// shorten cuts any write in progress to d from now, without waiting for
// the lock its writer holds: the way out of a test must not wait for a
// peer that stopped reading.
func (fw *frameWriter) shorten(d time.Duration) {
	_ = fw.w.SetWriteDeadline(time.Now().Add(d))
}
