package stats

import "testing"

// TestExtent feeds arrival orders (received datagrams only) and checks the
// extent of each re-ordered one against RFC 4737's definition.
func TestExtent(t *testing.T) {
	tests := []struct {
		name    string
		arrival []uint64
		want    map[int]int64 // arrival index -> extent, for the re-ordered ones
		runs    int           // runs kept at the end (without trimming)
	}{
		{"in order", []uint64{0, 1, 2, 3, 4}, map[int]int64{}, 1},
		{"neighbours swapped", []uint64{0, 2, 1, 3}, map[int]int64{2: 1}, 3},
		{"displaced by 5", []uint64{0, 2, 3, 4, 5, 6, 1, 7}, map[int]int64{6: 5}, 3},
		// Both are measured from 3, the first arrival above them.
		{"two late in a row", []uint64{0, 3, 4, 1, 2, 5}, map[int]int64{3: 2, 4: 3}, 3},
		// 1 is behind 4 (index 1), 2 and 3 only behind 4 as well.
		{"reversed block", []uint64{0, 4, 3, 2, 1, 5}, map[int]int64{2: 1, 3: 2, 4: 3}, 3},
		// 1 is measured from 5 (index 1), not from the nearer 2.
		{"earliest greater is not nearest", []uint64{0, 5, 2, 1, 3, 4, 6}, map[int]int64{2: 1, 3: 2, 4: 3, 5: 4}, 3},
		{"loss then reorder", []uint64{0, 1, 5, 6, 3, 7}, map[int]int64{4: 2}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := extentTracker{maxRuns: 1 << 10}
			var top uint64
			for j, s := range tt.arrival {
				if j == 0 || s > top {
					e.record(int64(j), s)
					top = s
					continue
				}
				want, ok := tt.want[j]
				if !ok {
					t.Fatalf("arrival %d (seq %d) re-ordered but the table has no extent", j, s)
				}
				if got := e.extent(int64(j), s); got != want {
					t.Errorf("arrival %d (seq %d): extent %d, want %d", j, s, got, want)
				}
			}
			if e.runs.len() != tt.runs {
				t.Errorf("runs = %d, want %d", e.runs.len(), tt.runs)
			}
		})
	}
}

func TestExtentTrimAndTruncate(t *testing.T) {
	e := extentTracker{maxRuns: 4}
	// Records 0, 2, 4, 6, 8, 10: every one a new run (numbers jump by 2).
	for k := 0; k < 6; k++ {
		e.record(int64(k), uint64(2*k))
	}
	if e.runs.len() != 4 || !e.truncated {
		t.Fatalf("runs %d truncated %v, want 4 true", e.runs.len(), e.truncated)
	}
	// Oldest kept run is seq 4 at index 2. For seq 5 the answer (6 at
	// index 3) is kept: exact.
	if got := e.extent(6, 5); got != 3 {
		t.Errorf("extent(6, 5) = %d, want 3", got)
	}
	// For seq 1 the true answer (2 at index 1) was dropped: lower bound.
	if got := e.extent(6, 1); got != 4 {
		t.Errorf("extent(6, 1) = %d, want the lower bound 4", got)
	}
	e.trim(7)
	if e.runs.len() != 2 || e.runs.front().seq != 8 {
		t.Fatalf("after trim(7): %d runs from %d, want 2 from 8", e.runs.len(), e.runs.front().seq)
	}
	e.trim(1 << 40)
	if e.runs.len() != 1 {
		t.Fatalf("trim dropped the newest run")
	}
}
