package emit

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// withShortTail adds to both ends of r a tail of 20 ms after its last row,
// with tailBytes per stream (a reassembly queue emptying at the end), and
// the totals to match: the rows still add up to them.
func withShortTail(r *result.Result, tailBytes int64) *result.Result {
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		last := e.Intervals[len(e.Intervals)-1]
		tail := result.Interval{Index: last.Index + 1, Start: last.End, End: last.End + 0.02, Tail: true}
		for _, si := range last.Streams {
			tail.Streams = append(tail.Streams, result.StreamInterval{ID: si.ID, Sender: si.Sender, Bytes: tailBytes})
		}
		e.Intervals = append(e.Intervals, tail)
		for i := range e.Streams {
			e.Streams[i].Bytes += tailBytes
		}
	}
	return r
}

// -y C never prints a zero-length row: a tail shorter than a tenth of -i
// joins the row before it, and the rows still add up to the totals.
func TestIperf2CSVFoldsAShortTail(t *testing.T) {
	r := withShortTail(parallelResult(), 10_900_000)
	out := renderIperf2(t, &Iperf2CSV{W: &bytes.Buffer{}}, r)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// Three rows of two streams and a sum, then the totals likewise.
	if len(lines) != 4*3 {
		t.Fatalf("%d lines, want 12:\n%s", len(lines), out)
	}
	rows := map[string]int64{}
	for i, l := range lines {
		cols := strings.Split(l, ",")
		span := strings.Split(cols[6], "-")
		if span[0] == span[1] {
			t.Errorf("zero-length row %q", l)
		}
		n, err := strconv.ParseInt(cols[7], 10, 64)
		if err != nil {
			t.Fatalf("bytes %q: %v", cols[7], err)
		}
		if i < 9 {
			rows[cols[5]] += n
			continue
		}
		if rows[cols[5]] != n {
			t.Errorf("stream %s: rows add up to %d bytes, the total says %d", cols[5], rows[cols[5]], n)
		}
	}
	if last := strings.Split(lines[6], ","); last[6] != "2.0-3.0" {
		t.Errorf("the last row, with the tail in it, spans %s, want 2.0-3.0", last[6])
	}
}

// The text shows a short tail's bytes but no rate: over 20 ms a queue's
// emptying reads as a rate the path never carried.
func TestTextShortTailHasNoRate(t *testing.T) {
	r := withShortTail(forwardResult(), 10_900_000)
	var b bytes.Buffer
	if err := Replay(&Text{W: &b}, r); err != nil {
		t.Fatal(err)
	}
	var tail string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "3.00-3.02") {
			tail = l
		}
	}
	if tail == "" {
		t.Fatalf("no tail row:\n%s", b.String())
	}
	if !strings.Contains(tail, "10.4 MBytes") || strings.Contains(tail, "bits/sec") {
		t.Errorf("tail row %q: want its bytes and no rate", tail)
	}
	// A tail of a tenth of -i or more keeps its rate.
	r = forwardResult()
	last := &r.Local.Intervals[len(r.Local.Intervals)-1]
	last.Tail = true
	b.Reset()
	if err := Replay(&Text{W: &b}, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2.00-3.00") || strings.Count(b.String(), "bits/sec") < 4 {
		t.Errorf("a whole-second tail lost its rate:\n%s", b.String())
	}
}
