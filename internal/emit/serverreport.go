package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// ServerReport writes a server's own report of each test it ran, as
// iperf3 -s prints one: the accepted connection, the interval rows and
// the summary with both ends' figures, in the client's text layout. A
// server runs many tests at once, so every line starts with the test's
// ID and client ("[t3 10.0.0.2:51234] "), and each test's report is one
// Write: reports never land inside one another.
//
// A test followed through Live has its header and its rows written as
// they happen, each line whole, and only its summary at the end; any
// other test's rows are written when it ends, from the server's record.
type ServerReport struct {
	W   io.Writer
	Opt Options
	// Interval is the server's -i: the rows' length, 0 for none. A test's
	// rows are cut at the client's -i; they are joined into rows of
	// Interval when it is a whole multiple of the client's.
	Interval time.Duration
	// JSON writes one compact JSON document per test and line (JSON
	// Lines): {"test":…,"peer":…,"result":…}, the result in the layout
	// of the client's -J.
	JSON bool

	mu sync.Mutex
	// live are the tests whose header (and rows, when their rows is
	// set) Live wrote, until their Write.
	live map[string]*serverLive
}

// Live is an observer that writes test id's header when it starts and
// its rows as each ends, as iperf2's and iperf3's servers do: the
// client's rows as they come when the server's -i is the client's,
// joined into rows of the server's -i as each is complete when it is a
// whole multiple (the last, shorter one at the end), and otherwise the
// client's rows with a note why. In JSON, nothing is live.
func (s *ServerReport) Live(id, peer string) result.Observer {
	if s.JSON {
		return nil
	}
	return &serverLive{s: s, id: id, peer: peer}
}

type serverLive struct {
	s        *ServerReport
	id, peer string

	mu   sync.Mutex
	text *Text
	body bytes.Buffer
	res  *result.Result // the result the rows belong to, for the last one
	rows bool           // rows are shown live
	join int            // the client's rows in one of the server's
	// pending are the client's rows of the server's row not yet complete,
	// joined.
	pending *result.IntervalRow
}

func (l *serverLive) Started(r *result.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = &Text{W: &l.body, Opt: l.s.Opt, ServerSide: true, OneEnd: true}
	l.res = r
	own, every := r.Spec.Interval, l.s.Interval
	l.rows = every > 0 && own > 0
	l.join = 1
	note := ""
	if l.rows {
		if every%own == 0 {
			l.join = int(every / own)
		} else {
			note = notMultiple(own, every)
		}
	}
	l.s.mu.Lock()
	if l.s.live == nil {
		l.s.live = map[string]*serverLive{}
	}
	l.s.live[l.id] = l
	l.s.mu.Unlock()
	if l.text.Header(HeaderFromResult(r)) == nil {
		if note != "" {
			fmt.Fprintln(&l.body, note)
		}
		l.flush()
	}
}

func (l *serverLive) Interval(r *result.Result, row result.IntervalRow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.rows {
		return
	}
	l.res = r
	if l.join == 1 {
		l.write(row)
		return
	}
	if row.Tail {
		// A tail is a row of its own, as in the joined record (joinEnd):
		// the row before it ends with the test.
		l.writePending()
		row.Index = (row.Index + l.join - 1) / l.join
		l.write(row)
		return
	}
	last := (row.Index+1)%l.join == 0 // the server's row is complete
	if l.pending == nil {
		row.Index /= l.join
		l.pending = &row
	} else {
		joined := l.pending.Join(row)
		l.pending = &joined
	}
	if last {
		l.writePending()
	}
}

// finish writes the last joined row, shorter than the server's -i, of a
// test that ended without a tail.
func (l *serverLive) finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writePending()
}

func (l *serverLive) writePending() {
	if l.pending != nil {
		row := *l.pending
		l.pending = nil
		l.write(row)
	}
}

func (l *serverLive) write(row result.IntervalRow) {
	if l.text.Interval(l.res, row) == nil {
		l.flush()
	}
}

// flush writes what the text emitter wrote, prefixed, in one Write.
func (l *serverLive) flush() {
	out := prefixLines(fmt.Sprintf("[%s %s] ", l.id, l.peer), l.body.String())
	l.body.Reset()
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	_, _ = l.s.W.Write(out)
}

// Write reports one test: id names it ("t3"), peer is its client.
func (s *ServerReport) Write(id, peer string, r *result.Result) error {
	var out []byte
	var err error
	s.mu.Lock()
	live := s.live[id]
	delete(s.live, id)
	s.mu.Unlock()
	headerShown, rowsShown := live != nil, false
	if live != nil {
		live.finish()
		rowsShown = live.rows
	}
	if s.JSON {
		out, err = s.jsonLine(id, peer, r)
	} else {
		out, err = s.text(id, peer, r, headerShown, rowsShown)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.W.Write(out)
	return err
}

// jsonLine is the test's JSON document on one line.
func (s *ServerReport) jsonLine(id, peer string, r *result.Result) ([]byte, error) {
	var doc bytes.Buffer
	if r.Spec.Protocol == spec.RR {
		err := (&RRJSON{W: &doc}).Write(r)
		if err != nil {
			return nil, err
		}
	} else if err := (&JSON{W: &doc, Opt: s.Opt}).Write(r); err != nil {
		return nil, err
	}
	line, err := json.Marshal(struct {
		Test   string          `json:"test"`
		Peer   string          `json:"peer"`
		Result json.RawMessage `json:"result"`
	}{id, peer, json.RawMessage(doc.Bytes())})
	if err != nil {
		return nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, line); err != nil {
		return nil, err
	}
	compact.WriteByte('\n')
	return compact.Bytes(), nil
}

// text is the test's text report, every line prefixed.
func (s *ServerReport) text(id, peer string, r *result.Result, headerShown, rowsShown bool) ([]byte, error) {
	var body bytes.Buffer
	if r.Spec.Protocol == spec.RR {
		if err := (&RRText{W: &body, Opt: s.Opt, From: peer}).Write(r); err != nil {
			return nil, err
		}
	} else {
		t := &Text{W: &body, Opt: s.Opt, ServerSide: true, OneEnd: true}
		if !headerShown {
			if err := t.Header(HeaderFromResult(r)); err != nil {
				return nil, err
			}
		}
		if s.Interval > 0 && !rowsShown {
			rows, note := serverRows(r, s.Interval)
			if note != "" {
				fmt.Fprintln(&body, note)
			}
			for _, row := range rows.IntervalRows() {
				if err := t.Interval(rows, row); err != nil {
					return nil, err
				}
			}
		}
		if err := t.Summary(r); err != nil {
			return nil, err
		}
	}
	return prefixLines(fmt.Sprintf("[%s %s] ", id, peer), body.String()), nil
}

// prefixLines starts every line of text with prefix.
func prefixLines(prefix, text string) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		out.WriteString(prefix)
		out.WriteString(line)
	}
	return out.Bytes()
}

// serverRows is r with its rows joined into rows of every, when every is
// a whole multiple of the test's own interval; otherwise r as it is, and
// a note that says why its rows are not of the server's length.
func serverRows(r *result.Result, every time.Duration) (*result.Result, string) {
	own := r.Spec.Interval
	switch {
	case own <= 0:
		return r, ""
	case r.Local.RowsJoined > 1:
		// The server kept this long test's rows joined (flowrun.ServerStreamRows).
		return r, fmt.Sprintf("Rows of up to %d × %v: the server keeps a bounded number of rows of a test, joined as it goes on", r.Local.RowsJoined, own)
	case every == own:
		return r, ""
	case every%own != 0:
		return r, notMultiple(own, every)
	}
	k := int(every / own)
	joined := *r
	joined.Local = joinEnd(r.Local, k)
	joined.Remote = joinEnd(r.Remote, k)
	return &joined, ""
}

// notMultiple is the note on rows of the client's -i own shown where the
// server's -i every asked for rows that can't be made of them.
func notMultiple(own, every time.Duration) string {
	return fmt.Sprintf("Rows every %v, the client's -i: the server's -i %v is not a whole multiple of it", own, every)
}

// joinEnd joins an end's settled rows k at a time; its tail stays a row
// of its own. Both ends number their rows alike, so the joined rows of
// the two ends still pair by index.
func joinEnd(e result.End, k int) result.End {
	settled := e.SettledIntervals()
	// The settlements are in the rows now; the joined rows must not get
	// them again.
	e.Streams = append([]result.Stream(nil), e.Streams...)
	for i := range e.Streams {
		e.Streams[i].UDPSettlements = nil
	}
	var out []result.Interval
	for _, iv := range settled {
		index := iv.Index / k
		if iv.Tail {
			index = (iv.Index + k - 1) / k
		}
		if n := len(out); n > 0 && out[n-1].Index == index && !out[n-1].Tail && !iv.Tail {
			last := &out[n-1]
			last.End = iv.End
			last.Omitted = last.Omitted && iv.Omitted
			last.Streams = result.JoinStreamIntervals(last.Streams, iv.Streams)
			continue
		}
		iv.Index = index
		iv.Streams = append([]result.StreamInterval(nil), iv.Streams...)
		out = append(out, iv)
	}
	e.Intervals = out
	return e
}
