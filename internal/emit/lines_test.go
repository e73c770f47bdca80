package emit

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// fakeClock is a clock that moves one second each time it is read.
func fakeClock(start time.Time) func() time.Time {
	now := start.Add(-time.Second)
	return func() time.Time { now = now.Add(time.Second); return now }
}

// A test's text with --timestamps (iperf3's default format) and -V, on
// a clock that moves a second per write: each line carries the time of
// the write it came in.
func TestTimestampsVerboseGolden(t *testing.T) {
	r := forwardResult()
	r.Local.Host = result.Host{Hostname: "client", System: "Linux client 6.1.0 x86_64", Version: "wireperf 1.2.3"}
	r.StartedAt = time.Date(2026, time.December, 4, 8, 0, 0, 0, time.UTC)
	r.ControlMSS = 8948
	r.ServerOutput = &result.ServerOutput{Text: "Accepted connection from 127.0.0.1, port 40000\n[  5]   0.00-1.00   sec   100 MBytes   839 Mbits/sec                  receiver\n"}
	var b bytes.Buffer
	lines := &LineWriter{W: &b, Timestamps: "%c ", Now: fakeClock(time.Date(2026, time.December, 4, 8, 0, 1, 0, time.UTC))}
	if err := Replay(&Text{W: lines, Opt: Options{Verbose: true}}, r); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "text-timestamps-verbose.golden", b.String())
}

// countingWriter counts the writes it gets.
type countingWriter struct {
	bytes.Buffer
	writes, flushes int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return c.Buffer.Write(p) }
func (c *countingWriter) Flush() error                { c.flushes++; return nil }

// With Flush each line is a write of its own, flushed; without it one
// write stays one, and a line cut across writes is stamped once.
func TestLineWriterFlushAndPartialLines(t *testing.T) {
	var w countingWriter
	l := &LineWriter{W: &w, Flush: true, Timestamps: "%T ", Now: fakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	if _, err := l.Write([]byte("one\ntwo\nthr")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("ee\n")); err != nil {
		t.Fatal(err)
	}
	if want := "03:04:05 one\n03:04:05 two\n03:04:05 three\n"; w.String() != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}
	if w.writes != 4 || w.flushes != 4 {
		t.Errorf("%d writes and %d flushes, want a write and a flush per line or piece (4)", w.writes, w.flushes)
	}

	var one countingWriter
	l = &LineWriter{W: &one, Timestamps: "%s|", Now: fakeClock(time.Unix(100, 0))}
	if _, err := l.Write([]byte("a\nb\n")); err != nil {
		t.Fatal(err)
	}
	if one.String() != "100|a\n100|b\n" || one.writes != 1 || one.flushes != 0 {
		t.Errorf("without Flush: %q in %d writes, %d flushes; want both lines in one write", one.String(), one.writes, one.flushes)
	}
	if strings.Count(one.String(), "|") != 2 {
		t.Errorf("stamps: %q", one.String())
	}
}
