package units

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 points"}, {1, "1 point"}, {2, "2 points"}, {483, "483 points"}, {-1, "-1 points"}} {
		if got := Count(tt.n, "point"); got != tt.want {
			t.Errorf("Count(%d, point) = %q; want %q", tt.n, got, tt.want)
		}
	}
}
