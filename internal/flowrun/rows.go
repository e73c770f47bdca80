package flowrun

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// ServerStreamRows is how many stream rows (rows × the end's streams) a
// server keeps of one test: every row still goes to the client and to the
// server's live report as it is cut, but the server's own record of a
// long test at a short -i holds its rows joined, so that what a test
// costs is fixed however long it runs. 65,536 stream rows are 18 h of one
// stream at -i 1, or 512 rows of -P 128.
const ServerStreamRows = 1 << 16

// StreamRowBytes is what one kept stream row costs, to charge a test for
// before it runs: a StreamInterval (about 130 bytes) with its row's share,
// and room for a UDP receiver's figures.
const StreamRowBytes = 512

// minKeptRows is the fewest rows kept however many streams the end has.
const minKeptRows = 16

// KeptStreamRows is how many stream rows an end of s keeps under a cap of
// maxStreamRows (0: every row): its rows over a test of length d (the
// spec's own, or the server's longest for a test that stops on bytes),
// times its streams, at most the cap. A server charges a test
// KeptStreamRows × StreamRowBytes before it admits it.
func KeptStreamRows(s spec.Spec, d time.Duration, maxStreamRows int) int64 {
	if s.Interval <= 0 {
		return 0
	}
	streams := int64(s.DataConns())
	if s.Duration > 0 {
		d = s.Duration
	}
	rows := int64(maxKeptRows(maxStreamRows, int(streams)))
	if d > 0 {
		// The rows of the test, the omitted start's forced cut and the tail.
		rows = min(rows, int64(d/s.Interval)+2)
	}
	return rows * streams
}

// maxKeptRows is the rows an end of streams keeps under a cap of
// maxStreamRows stream rows; math.MaxInt for no cap.
func maxKeptRows(maxStreamRows, streams int) int {
	if maxStreamRows <= 0 {
		return int(^uint(0) >> 1)
	}
	return max(maxStreamRows/max(streams, 1), minKeptRows)
}

// keptRows is an end's record of its rows within a cap: once it holds
// max rows, adjacent rows are joined in pairs and each kept row from then
// on takes twice as many of the test's intervals, so that the rows stay
// within the cap, cover the whole test at an even grain and still add up
// to the totals. Rows of the omitted start are joined only with each
// other; the tail stays a row of its own.
type keptRows struct {
	max   int               // the most rows kept; 0: no cap
	rows  []result.Interval // each row's Streams are its own once it holds more than one interval
	holds []int             // how many of the test's intervals each row holds
	every int               // how many intervals a row takes now: 1, 2, 4…
}

func (k *keptRows) add(iv result.Interval) {
	if k.every == 0 {
		k.every = 1
	}
	if n := len(k.rows); n > 0 && k.holds[n-1] < k.every && k.joinable(n-1, iv) {
		k.join(n-1, iv)
		k.holds[n-1]++
		return
	}
	k.rows = append(k.rows, iv)
	k.holds = append(k.holds, 1)
	if k.max > 0 && len(k.rows) > k.max {
		k.halve()
	}
}

// joinable says whether iv may be joined to row i.
func (k *keptRows) joinable(i int, iv result.Interval) bool {
	last := k.rows[i]
	return last.Omitted == iv.Omitted && !last.Tail && !iv.Tail
}

// join adds iv to row i: its span ends where iv's does, its counts add up.
func (k *keptRows) join(i int, iv result.Interval) {
	row := &k.rows[i]
	if k.holds[i] == 1 {
		// The row's first interval went to the live observers too: the
		// joined row gets a copy of its own.
		row.Streams = append([]result.StreamInterval(nil), row.Streams...)
	}
	row.End = iv.End
	row.Streams = result.JoinStreamIntervals(row.Streams, iv.Streams)
}

// halve joins the rows in pairs and doubles the grain.
func (k *keptRows) halve() {
	k.every *= 2
	out := 0
	for i := 0; i < len(k.rows); i++ {
		k.rows[out], k.holds[out] = k.rows[i], k.holds[i]
		if i+1 < len(k.rows) && k.holds[i]+k.holds[i+1] <= k.every && k.joinable(i, k.rows[i+1]) {
			k.join(out, k.rows[i+1])
			k.holds[out] += k.holds[i+1]
			i++
		}
		out++
	}
	clear(k.rows[out:])
	k.rows, k.holds = k.rows[:out], k.holds[:out]
}

// joined is the most intervals one kept row holds.
func (k *keptRows) joined() int {
	n := 1
	for _, h := range k.holds {
		n = max(n, h)
	}
	return n
}

// settle moves a stream's UDP settlements, which name the interval they
// correct, to the kept row that holds that interval, summing those that
// land on one row; rows hold the intervals from their index to the next
// row's.
func (k *keptRows) settle(in []result.UDPSettlement) []result.UDPSettlement {
	if k.joined() == 1 || len(in) == 0 {
		return in
	}
	var out []result.UDPSettlement
	at := map[int]int{} // kept row index → position in out
	for _, s := range in {
		for i := len(k.rows) - 1; i >= 0; i-- {
			if k.rows[i].Index <= s.Index {
				s.Index = k.rows[i].Index
				break
			}
		}
		if j, ok := at[s.Index]; ok {
			o := &out[j]
			o.Received += s.Received
			o.Lost += s.Lost
			o.Late += s.Late
			o.Duplicates += s.Duplicates
			o.Reordered += s.Reordered
			continue
		}
		at[s.Index] = len(out)
		out = append(out, s)
	}
	return out
}
