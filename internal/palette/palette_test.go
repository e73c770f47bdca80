package palette

import (
	"image/color"
	"testing"
)

func TestSeriesColoursParse(t *testing.T) {
	seen := map[color.RGBA]bool{}
	for i, h := range Series {
		c, err := Parse(h)
		if err != nil {
			t.Fatalf("Series[%d]: %v", i, err)
		}
		if seen[c] {
			t.Errorf("Series[%d] %s repeats an earlier colour", i, h)
		}
		seen[c] = true
	}
}

func TestHexCycles(t *testing.T) {
	n := len(Series)
	if Hex(n) != Hex(0) || Hex(n+1) != Hex(1) || Hex(-1) != Hex(n-1) {
		t.Errorf("Hex does not cycle: Hex(%d)=%s Hex(0)=%s Hex(-1)=%s", n, Hex(n), Hex(0), Hex(-1))
	}
	if c := Color(2); c != (color.RGBA{R: 0x5a, G: 0x9b, B: 0xd4, A: 0xff}) {
		t.Errorf("Color(2) = %v, want #5a9bd4", c)
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "#12345", "123456#", "#gg0000", "#1234567"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted it", s)
		}
	}
}
