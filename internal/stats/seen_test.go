package stats

import (
	"math/rand/v2"
	"testing"
)

// TestSeenWindow drives the bitmap and a map side by side: every number
// the window covers must read as the map says, after advances of every
// length (within a word, across words, wrapping, beyond the window) and
// after growing.
func TestSeenWindow(t *testing.T) {
	tests := []struct {
		name     string
		size     uint64
		maxStep  uint64 // advance by 1..maxStep
		growAt   int    // grow to 4*size after this many steps; -1 never
		steps    int
		setRatio float64 // share of numbers in a step that arrive
	}{
		{"in order", 128, 1, -1, 1000, 1},
		{"small gaps", 128, 5, -1, 1000, 0.7},
		{"gaps across words", 256, 70, -1, 500, 0.5},
		{"jumps beyond the window", 128, 400, -1, 200, 0.5},
		{"grow while wrapped", 128, 9, 300, 1000, 0.6},
		{"grow early", 1024, 3, 10, 500, 0.6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tt.name))))
			w := newSeenWindow(tt.size)
			truth := map[uint64]bool{}
			var top, floor uint64
			for i := 0; i < tt.steps; i++ {
				next := top + 1 + rng.Uint64N(tt.maxStep)
				if i == 0 {
					next = rng.Uint64N(tt.maxStep)
				}
				w.advance(next)
				top = next
				// Some numbers in the new span arrive, as re-ordered ones would.
				for s := max(top+1, tt.maxStep) - tt.maxStep; s <= top; s++ {
					if w.covers(s) && rng.Float64() < tt.setRatio {
						w.set(s)
						truth[s] = true
					}
				}
				if i == tt.growAt {
					// What fell out before growing stays unknown.
					floor = w.lo()
					w.grow(4 * w.size)
				}
				lo := w.lo()
				if want := max(top+1, w.size, floor+w.size) - w.size; lo != want {
					t.Fatalf("step %d: lo = %d, want %d", i, lo, want)
				}
				for s := lo; s <= top; s++ {
					if w.get(s) != truth[s] {
						t.Fatalf("step %d (top %d): get(%d) = %v, want %v", i, top, s, w.get(s), truth[s])
					}
				}
				if a, b := lo, top+1; b > a {
					var want uint64
					for s := a; s < b; s++ {
						if truth[s] {
							want++
						}
					}
					if got := w.count(a, b); got != want {
						t.Fatalf("step %d: count(%d, %d) = %d, want %d", i, a, b, got, want)
					}
				}
			}
		})
	}
}

func TestSeenWindowCovers(t *testing.T) {
	w := newSeenWindow(64)
	if w.covers(0) {
		t.Fatal("an empty window covers 0")
	}
	w.advance(100)
	for _, tt := range []struct {
		s    uint64
		want bool
	}{{36, false}, {37, true}, {100, true}, {101, false}} {
		if got := w.covers(tt.s); got != tt.want {
			t.Errorf("covers(%d) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
