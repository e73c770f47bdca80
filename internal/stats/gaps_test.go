package stats

import "testing"

func TestGapList(t *testing.T) {
	type op struct {
		kind     string // add, fill, expire, force, drain
		lo, hi   uint64 // add: range; fill: lo is the number; drain: lo is the limit
		deadline int64  // add: deadline; expire: now
		want     uint64 // expire/force/drain: lost; fill: 1 if found
		wantLen  int
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"one gap expires whole", []op{
			{kind: "add", lo: 3, hi: 5, deadline: 10, wantLen: 1},
			{kind: "expire", deadline: 9, want: 0, wantLen: 1},
			{kind: "expire", deadline: 10, want: 2, wantLen: 0},
		}},
		{"a fill reduces the loss", []op{
			{kind: "add", lo: 3, hi: 6, deadline: 10, wantLen: 1},
			{kind: "fill", lo: 4, want: 1, wantLen: 1},
			{kind: "fill", lo: 6, want: 0, wantLen: 1},
			{kind: "fill", lo: 2, want: 0, wantLen: 1},
			{kind: "expire", deadline: 11, want: 2, wantLen: 0},
		}},
		{"filled front gap leaves at once", []op{
			{kind: "add", lo: 1, hi: 2, deadline: 10, wantLen: 1},
			{kind: "add", lo: 5, hi: 7, deadline: 12, wantLen: 2},
			{kind: "fill", lo: 1, want: 1, wantLen: 1},
			{kind: "expire", deadline: 12, want: 2, wantLen: 0},
		}},
		{"filled middle gap waits, loses nothing", []op{
			{kind: "add", lo: 1, hi: 2, deadline: 10, wantLen: 1},
			{kind: "add", lo: 5, hi: 6, deadline: 12, wantLen: 2},
			{kind: "fill", lo: 5, want: 1, wantLen: 2},
			{kind: "expire", deadline: 100, want: 1, wantLen: 0},
		}},
		{"deadlines in order", []op{
			{kind: "add", lo: 1, hi: 2, deadline: 10},
			{kind: "add", lo: 3, hi: 5, deadline: 20},
			{kind: "add", lo: 7, hi: 1007, deadline: 30, wantLen: 3},
			{kind: "expire", deadline: 25, want: 3, wantLen: 1},
			{kind: "force", want: 1000, wantLen: 0},
		}},
		{"drain cuts at the limit", []op{
			{kind: "add", lo: 1, hi: 2, deadline: 10},
			{kind: "add", lo: 10, hi: 20, deadline: 20},
			{kind: "add", lo: 30, hi: 40, deadline: 30, wantLen: 3},
			{kind: "fill", lo: 11, want: 1, wantLen: 3},
			{kind: "fill", lo: 17, want: 1, wantLen: 3},
			// 1, 10..14 less 11: 1 + 4
			{kind: "drain", lo: 15, want: 5, wantLen: 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l gapList
			seen := newSeenWindow(64)
			seen.advance(50)
			for i, o := range tt.ops {
				var got uint64
				switch o.kind {
				case "add":
					l.add(o.lo, o.hi, o.deadline, 0)
				case "fill":
					if g := l.find(o.lo); g != nil {
						g.filled++
						seen.set(o.lo)
						got = 1
						l.dropFilled()
					}
				case "expire":
					got = l.expire(o.deadline)
				case "force":
					got = l.expireFront()
				case "drain":
					got = l.drain(o.lo, &seen, func(int, uint64, uint64) {})
				}
				if got != o.want {
					t.Fatalf("op %d (%s): got %d, want %d", i, o.kind, got, o.want)
				}
				if o.wantLen != 0 || o.kind != "add" {
					if l.len() != o.wantLen {
						t.Fatalf("op %d (%s): len %d, want %d", i, o.kind, l.len(), o.wantLen)
					}
				}
			}
		})
	}
}
