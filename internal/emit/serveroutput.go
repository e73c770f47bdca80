package emit

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// MaxServerOutput bounds a server's report for a client's
// --get-server-output: half of a control frame's 1 MiB (proto.MaxFrame),
// and within what iperf3 clients read.
const MaxServerOutput = 512 << 10

// minJSONStreamRow is the least one stream's row takes in the JSON
// document (its "streams" entry: socket, times, bytes, rate, flags): a
// document with more stream rows than MaxServerOutput / minJSONStreamRow
// cannot fit and is not rendered at all.
const minJSONStreamRow = 150

// ServerOutput renders a server's record of a test for a client's
// --get-server-output: iperf3 JSON, or our text when asText is set (an
// iperf3 server without -J sends text), within MaxServerOutput. Text is
// rendered until it reaches the cap, then cut with a note; JSON, which
// cannot be cut, is not rendered when its rows alone would pass the cap,
// and a note in text goes instead. The text is in the client's -f, format
// (the zero Format for the default); JSON has no units to choose.
func ServerOutput(asText bool) func(r *result.Result, format units.Format) ([]byte, bool) {
	return func(r *result.Result, format units.Format) ([]byte, bool) {
		if asText {
			return textWithin(r, format, MaxServerOutput), false
		}
		if n := streamRows(r); n > MaxServerOutput/minJSONStreamRow {
			return fmt.Appendf(nil, "(the server's JSON report of %d stream rows was too long to send)\n", n), false
		}
		var b bytes.Buffer
		if (&JSON{W: &b}).Write(r) != nil {
			return nil, true
		}
		if b.Len() > MaxServerOutput {
			return []byte("(the server's JSON report was too long to send)\n"), false
		}
		return b.Bytes(), true
	}
}

// streamRows counts the stream rows of both ends of r.
func streamRows(r *result.Result) int {
	n := 0
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for _, iv := range e.Intervals {
			n += len(iv.Streams)
		}
	}
	return n
}

// textWithin is r's text report, rendered until it passes limit bytes
// and cut there with a note.
func textWithin(r *result.Result, format units.Format, limit int) []byte {
	w := &cappedBuffer{limit: limit}
	err := Replay(&Text{W: w, ServerSide: true, Opt: Options{Format: format}}, r)
	switch {
	case errors.Is(err, errCapped):
		return append(w.b.Bytes(), "\n(the server's report was cut here: too long to send)\n"...)
	case err != nil:
		return nil
	}
	return w.b.Bytes()
}

var errCapped = errors.New("report reached its cap")

// cappedBuffer keeps up to limit bytes and fails every write past them,
// which stops the emitter that writes to it.
type cappedBuffer struct {
	b     bytes.Buffer
	limit int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - c.b.Len(); len(p) > room {
		c.b.Write(p[:max(room, 0)])
		return max(room, 0), errCapped
	}
	return c.b.Write(p)
}
