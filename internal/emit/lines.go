package emit

import (
	"bytes"
	"io"
	"time"

	"github.com/wireperf/wireperf/internal/strftime"
)

// LineWriter passes text output on line by line, as iperf3's
// --timestamps and --forceflush ask: every line starts with the time in
// Timestamps' strftime format (when set), and with Flush every line goes
// out in a Write of its own, flushed when W can be. Without Flush one
// Write stays one Write, so a report still lands whole.
type LineWriter struct {
	W          io.Writer
	Timestamps string
	Flush      bool
	// Now is the clock the stamps read; nil is time.Now (tests set it).
	Now func() time.Time

	midLine bool // the last Write ended inside a line
}

// Write stamps and passes on p.
func (l *LineWriter) Write(p []byte) (int, error) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	stamp := ""
	if l.Timestamps != "" {
		stamp = strftime.Format(l.Timestamps, now())
	}
	var out bytes.Buffer
	rest := p
	for len(rest) > 0 {
		end := bytes.IndexByte(rest, '\n') + 1
		if end == 0 {
			end = len(rest)
		}
		line := rest[:end]
		rest = rest[end:]
		if !l.midLine {
			out.WriteString(stamp)
		}
		out.Write(line)
		l.midLine = line[len(line)-1] != '\n'
		if l.Flush {
			if err := l.pass(out.Bytes()); err != nil {
				return 0, err
			}
			out.Reset()
		}
	}
	if out.Len() > 0 {
		if err := l.pass(out.Bytes()); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (l *LineWriter) pass(b []byte) error {
	if _, err := l.W.Write(b); err != nil {
		return err
	}
	if f, ok := l.W.(interface{ Flush() error }); ok && l.Flush {
		return f.Flush()
	}
	return nil
}
