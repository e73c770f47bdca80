package stats

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

const ms = int64(time.Millisecond)

// step is one scripted event: an arrival of seq at ms (sent 1 ms per
// number earlier-ish; only receive times matter for loss), or a cut.
type step struct {
	cut  bool
	seq  uint64
	at   int64   // ms
	want *counts // for a cut: the interval's figures
}

func arr(at int64, seqs ...uint64) []step {
	s := make([]step, len(seqs))
	for i, q := range seqs {
		s[i] = step{seq: q, at: at}
	}
	return s
}

func cut(at int64, c counts) []step { return []step{{cut: true, at: at, want: &c}} }

func script(parts ...[]step) []step {
	var all []step
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func seqRange(lo, hi uint64) []uint64 {
	var s []uint64
	for q := lo; q < hi; q++ {
		s = append(s, q)
	}
	return s
}

func countsOf(u result.UDP) counts {
	return counts{received: u.Received, lost: u.Lost, late: u.Late, dups: u.Duplicates, reordered: u.Reordered, maxExtent: u.ReorderMaxExtent}
}

// TestUDPReceiverScripted runs arrival scripts with a 1 s late threshold
// and checks interval and stream figures against the definitions.
func TestUDPReceiverScripted(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		finalAt   int64 // ms
		sentTotal int64
		want      counts
	}{
		{"in order", arr(0, seqRange(0, 10)...), 10, 10,
			counts{received: 10}},
		{"single loss", arr(0, 0, 1, 2, 4, 5), 10, 6,
			counts{received: 5, lost: 1}},
		{"burst loss", arr(0, 0, 1, 102, 103), 10, 104,
			counts{received: 4, lost: 100}},
		{"neighbours swapped", arr(0, 0, 2, 1, 3), 10, 4,
			counts{received: 4, reordered: 1, maxExtent: 1}},
		{"displaced by 5", arr(0, 0, 2, 3, 4, 5, 6, 1, 7), 10, 8,
			counts{received: 8, reordered: 1, maxExtent: 5}},
		{"duplicates", arr(0, 0, 1, 1, 2, 2, 2, 0), 10, 3,
			counts{received: 3, dups: 4}},
		{"duplicate of a re-ordered one", arr(0, 0, 2, 1, 1), 10, 3,
			counts{received: 3, reordered: 1, maxExtent: 1, dups: 1}},
		{"late after the threshold", script(arr(0, 0, 2), arr(1500, 1), arr(1600, 1)), 2000, 3,
			counts{received: 2, lost: 1, late: 1, dups: 1}},
		{"late exactly at the deadline", script(arr(0, 0, 2), arr(1000, 1)), 2000, 3,
			counts{received: 2, lost: 1, late: 1}},
		{"just before the deadline", script(arr(0, 0, 2), arr(999, 1)), 2000, 3,
			counts{received: 3, reordered: 1, maxExtent: 1}},
		{"deadline from detection, not from start", script(arr(0, 0), arr(900, 2), arr(1800, 1)), 2000, 3,
			counts{received: 3, reordered: 1, maxExtent: 1}},
		{"tail loss counted by Final", arr(0, seqRange(0, 5)...), 10, 10,
			counts{received: 5, lost: 5}},
		{"tail unknown without sentTotal", arr(0, seqRange(0, 5)...), 10, -1,
			counts{received: 5}},
		{"nothing received", nil, 10, 5,
			counts{lost: 5}},
		{"first number not 0", arr(0, 3, 4), 10, 5,
			counts{received: 2, lost: 3}},
		{"pending gap lost at Final", arr(0, 0, 2, 3), 500, 4,
			counts{received: 3, lost: 1}},
		// 9 was never sent: it is invalid, and 2..4 are lost, not 2..8.
		{"pending gap cut by sentTotal", arr(0, 0, 1, 9), 500, 5,
			counts{received: 2, lost: 3}},
		{"interval cuts", script(
			arr(0, seqRange(0, 5)...),
			cut(100, counts{received: 5}),
			arr(200, 6, 7, 8, 9),
			cut(300, counts{received: 4, lost: 1}), // 5 due in this row, missing
			arr(400, 10),
			cut(1300, counts{received: 1}),
			arr(1400, 5, 11),
			cut(1500, counts{received: 1, late: 1}),
		), 1600, 12, counts{received: 11, lost: 1, late: 1}},
		{"loss and reorder across a cut", script(
			arr(0, 0, 3),
			cut(100, counts{received: 2, lost: 2}), // provisional
			arr(200, 2, 1),
			cut(300, counts{received: 2, reordered: 2, maxExtent: 2}),
		), 400, 4, counts{received: 4, reordered: 2, maxExtent: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewUDPReceiver(UDPConfig{LateThreshold: time.Second, TimestampSource: "kernel"})
			for i, s := range tt.steps {
				if s.cut {
					if got := countsOf(r.Cut(s.at * ms)); got != *s.want {
						t.Errorf("cut %d at %d ms: %+v, want %+v", i, s.at, got, *s.want)
					}
					continue
				}
				r.Add(Arrival{Seq: s.seq, SentNs: s.at*ms - 5*ms, RecvNs: s.at * ms})
			}
			u := r.Final(tt.finalAt*ms, tt.sentTotal)
			if got := countsOf(u); got != tt.want {
				t.Errorf("final: %+v, want %+v", got, tt.want)
			}
			if u.Expected != u.Received+u.Lost {
				t.Errorf("expected %d != received %d + lost %d", u.Expected, u.Received, u.Lost)
			}
			if u.TimestampSource != "kernel" {
				t.Errorf("timestamp source %q", u.TimestampSource)
			}
			if again := r.Final(tt.finalAt*ms+5, tt.sentTotal); countsOf(again) != tt.want {
				t.Errorf("second Final differs: %+v", countsOf(again))
			}
		})
	}
}

func TestUDPReceiverDefaults(t *testing.T) {
	r := NewUDPReceiver(UDPConfig{})
	r.Add(Arrival{Seq: 0, RecvNs: 0})
	r.Add(Arrival{Seq: 2, RecvNs: 0})
	// The default threshold is 2 s: 1 is missing from the row it was due
	// in, provisionally until 2 s have passed, and lost then.
	if u := r.Cut(2*int64(time.Second) - 1); u.Lost != 1 || !u.Provisional || r.tot.lost != 0 {
		t.Fatalf("before the default 2 s: row lost %d provisional %v, lost %d", u.Lost, u.Provisional, r.tot.lost)
	}
	if u := r.Cut(2 * int64(time.Second)); u.Lost != 0 || u.Provisional || r.tot.lost != 1 {
		t.Fatalf("at 2 s: row lost %d provisional %v, lost %d, want 1", u.Lost, u.Provisional, r.tot.lost)
	}
	r.Add(Arrival{Seq: MaxSeq + 1})
	if r.Invalid() != 1 {
		t.Fatalf("invalid %d, want 1", r.Invalid())
	}
	if u := r.Final(3*int64(time.Second), -1); u.Received != 2 || u.Lost != 1 || u.Expected != 3 {
		t.Fatalf("final %+v", countsOf(u))
	}
}

func TestUDPReceiverClockOffset(t *testing.T) {
	r := NewUDPReceiver(UDPConfig{TimestampSource: "user-space"})
	for i := int64(0); i < 4; i++ {
		// The receiver's clock is 1 ms ahead; true OWD is 100 + 10*i µs.
		sent := i * ms
		r.Add(Arrival{Seq: uint64(i), SentNs: sent, RecvNs: sent + ms + 100_000 + 10_000*i})
	}
	u := r.Cut(10 * ms)
	if u.OWD == nil || u.OWD.Absolute || u.OWD.Relative.Max != 30 {
		t.Fatalf("before the offset: %+v", u.OWD)
	}
	if u.JitterMethod != "user-space clock" || u.JitterSamples != 3 {
		t.Errorf("jitter %q over %d", u.JitterMethod, u.JitterSamples)
	}
	r.SetClockOffset(ms, 20_000)
	u = r.Final(20*ms, 4)
	if !u.OWD.Absolute || u.OWD.AbsoluteUs.Min != 100 || u.OWD.AbsoluteUs.Max != 130 || u.OWD.ErrorBoundUs != 20 || u.OWD.OffsetUs != 1000 {
		t.Fatalf("after the offset: %+v %+v", *u.OWD, *u.OWD.AbsoluteUs)
	}
}

// TestUDPReceiverLimits exercises the memory bounds: a small window that
// must grow, and caps that force early loss, with counts staying
// consistent.
func TestUDPReceiverLimits(t *testing.T) {
	tests := []struct {
		name       string
		lim        limits
		seqs       []uint64
		want       counts
		wantWindow uint64
	}{
		// The gap 1..199 must stay known while 200..299 arrive: the window
		// grows from 64, and the late 1 is still told re-ordered.
		{"window grows", limits{minWindow: 64, maxWindow: 1 << 12, maxGaps: 8, maxRuns: 8},
			append(append([]uint64{0}, seqRange(200, 300)...), 1, 1),
			counts{received: 102, lost: 198, reordered: 1, maxExtent: 100, dups: 1}, 512},
		// A gap wider than the largest window is lost at once; its numbers
		// then read as duplicates (below the window).
		{"gap beyond the largest window", limits{minWindow: 64, maxWindow: 128, maxGaps: 8, maxRuns: 8},
			[]uint64{0, 1000, 5},
			counts{received: 2, lost: 999, dups: 1}, 64},
		// Too many gaps: the oldest is lost before its deadline, and its
		// number is then late.
		{"too many gaps", limits{minWindow: 64, maxWindow: 1 << 12, maxGaps: 2, maxRuns: 8},
			[]uint64{0, 2, 4, 6, 1, 3},
			counts{received: 5, lost: 2, late: 1, reordered: 1, maxExtent: 2}, 64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newUDPReceiver(UDPConfig{}, tt.lim)
			for _, s := range tt.seqs {
				r.Add(Arrival{Seq: s})
			}
			u := r.Cut(0)
			if got := countsOf(u); got != tt.want {
				t.Errorf("%+v, want %+v", got, tt.want)
			}
			if r.seen.size != tt.wantWindow {
				t.Errorf("window %d, want %d", r.seen.size, tt.wantWindow)
			}
		})
	}
}

// TestUDPReceiverImpossibleNumbers: a datagram with the right token can
// carry any number. One far beyond the sender's (10^12) is invalid at
// once; one within reach but at or above what the sender says it sent is
// found invalid at Final. Neither counts as received or makes loss.
func TestUDPReceiverImpossibleNumbers(t *testing.T) {
	r := NewUDPReceiver(UDPConfig{LateThreshold: time.Second})
	var rows []result.UDP
	for i := uint64(0); i < 100; i++ {
		at := int64(i) * ms
		r.Add(Arrival{Seq: i, SentNs: at, RecvNs: at})
		switch i {
		case 30:
			r.Add(Arrival{Seq: 1_000_000_000_000, SentNs: at, RecvNs: at})
		case 60:
			r.Add(Arrival{Seq: 150, SentNs: at, RecvNs: at}) // 61..149 look missing for now
		case 49, 79:
			rows = append(rows, r.Cut(at))
		}
	}
	if r.Invalid() != 1 {
		t.Fatalf("invalid %d before Final, want 1 (the 10^12)", r.Invalid())
	}
	u := r.Final(2000*ms, 100)
	if u.Received != 100 || u.Lost != 0 || u.Expected != 100 || u.Invalid != 2 {
		t.Fatalf("final received %d lost %d expected %d invalid %d, want 100, 0, 100, 2", u.Received, u.Lost, u.Expected, u.Invalid)
	}
	var got counts
	for _, row := range rows {
		got.received += row.Received
		got.lost += row.Lost
	}
	for _, s := range r.Settlements() {
		got.received += s.Received
		got.lost += s.Lost
	}
	if got.received != u.Received || got.lost != u.Lost {
		t.Fatalf("settled rows sum to received %d lost %d, totals %d and %d", got.received, got.lost, u.Received, u.Lost)
	}
}
