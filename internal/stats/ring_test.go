package stats

import "testing"

func TestRing(t *testing.T) {
	tests := []struct {
		name   string
		pushes int // items 0..pushes-1 pushed one at a time
		pops   int // popped after every push once len exceeds keep
		keep   int
	}{
		{"empty", 0, 0, 0},
		{"below first size", 10, 0, 0},
		{"grows", 100, 0, 0},
		{"wraps without growing", 1000, 1, 8},
		{"wraps and grows", 1000, 1, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ring[int]
			first := 0
			for i := 0; i < tt.pushes; i++ {
				r.pushBack(i)
				for j := 0; j < tt.pops && r.len() > tt.keep; j++ {
					if got := *r.front(); got != first {
						t.Fatalf("front = %d, want %d", got, first)
					}
					r.popFront()
					first++
				}
			}
			if want := tt.pushes - first; r.len() != want {
				t.Fatalf("len = %d, want %d", r.len(), want)
			}
			for i := 0; i < r.len(); i++ {
				if got := *r.at(i); got != first+i {
					t.Fatalf("at(%d) = %d, want %d", i, got, first+i)
				}
			}
			if r.len() > 0 && *r.back() != tt.pushes-1 {
				t.Fatalf("back = %d, want %d", *r.back(), tt.pushes-1)
			}
		})
	}
}
