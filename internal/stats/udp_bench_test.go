package stats

import (
	"testing"
)

// mixedTraffic is a repeating arrival pattern with everything the hot path
// handles: in-order datagrams, a loss every 100, a swap every 50, a
// duplicate every 70, and GRO-shared receive times. Times advance 1 µs per
// datagram, so with a 1 ms threshold gaps expire as the pattern runs.
func mixedTraffic(n int) []Arrival {
	var a []Arrival
	for i := 0; len(a) < n; i++ {
		seq := uint64(i)
		switch {
		case i%100 == 99:
			continue // lost
		case i%50 == 10:
			seq++ // swap with the next
		case i%50 == 11:
			seq--
		}
		t := int64(i) * 1000
		a = append(a, Arrival{Seq: seq, SentNs: t, RecvNs: t + 20_000 + int64(i%7)*100, SharedRecvTime: i%4 == 3})
		if i%70 == 0 {
			a = append(a, a[len(a)-1])
		}
	}
	return a
}

// shift moves a pattern on by one period so a receiver can take it again.
func shift(a []Arrival, seqs uint64, ns int64) {
	for i := range a {
		a[i].Seq += seqs
		a[i].SentNs += ns
		a[i].RecvNs += ns
	}
}

func TestUDPReceiverAddAllocs(t *testing.T) {
	traffic := mixedTraffic(10_000)
	period, periodNs := traffic[len(traffic)-1].Seq+2, traffic[len(traffic)-1].SentNs+1000
	r := NewUDPReceiver(UDPConfig{LateThreshold: 1_000_000})
	// Warm up: the rings reach their working size.
	for range 3 {
		for _, a := range traffic {
			r.Add(a)
		}
		shift(traffic, period, periodNs)
	}
	i := 0
	allocs := testing.AllocsPerRun(len(traffic)-1, func() {
		r.Add(traffic[i])
		i++
	})
	if allocs != 0 {
		t.Fatalf("Add allocates %v times per call in steady state", allocs)
	}
	u := r.Cut(traffic[len(traffic)-1].RecvNs)
	if u.Lost == 0 || u.Reordered == 0 || u.Duplicates == 0 || u.JitterSamples == 0 {
		t.Fatalf("the pattern missed a path: %+v", countsOf(u))
	}
}

func BenchmarkUDPReceiverAdd(b *testing.B) {
	for _, bc := range []struct {
		name    string
		traffic []Arrival
	}{
		{"in order", func() []Arrival {
			a := make([]Arrival, 1<<16)
			for i := range a {
				a[i] = Arrival{Seq: uint64(i), SentNs: int64(i) * 1000, RecvNs: int64(i)*1000 + 20_000 + int64(i%7)*100}
			}
			return a
		}()},
		{"mixed", mixedTraffic(1 << 16)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			traffic := bc.traffic
			period, periodNs := traffic[len(traffic)-1].Seq+2, traffic[len(traffic)-1].SentNs+1000
			r := NewUDPReceiver(UDPConfig{LateThreshold: 1_000_000})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == len(traffic) {
					shift(traffic, period, periodNs)
					i = 0
				}
				r.Add(traffic[i])
				i++
			}
		})
	}
}
