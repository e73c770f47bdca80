package impair

import (
	"strings"
	"testing"
)

// Each value's String reads back through Set to the same value, and bad
// text is refused with the reason.
func TestFlagValues(t *testing.T) {
	var p float64
	pv := Percent(&p)
	if pv.String() != "0" {
		t.Errorf("zero shows as %q", pv.String())
	}
	for _, s := range []string{"0.1%", "0.001", "25%"} {
		if err := pv.Set(s); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		was := p
		if err := pv.Set(pv.String()); err != nil || p != was || pv.Get() != was {
			t.Errorf("%q: shown as %q, read back %v (%v), want %v", s, pv.String(), p, err, was)
		}
	}
	if err := pv.Set("150%"); err == nil {
		t.Error("150% accepted")
	}

	var g *GilbertElliott
	bv := BurstLoss(&g)
	if bv.String() != "" {
		t.Errorf("no burst loss shows as %q", bv.String())
	}
	for _, s := range []string{"1%,30%", "0.01/0.3"} {
		g = nil
		if err := bv.Set(s); err != nil || g == nil || g.P != 0.01 || g.R != 0.3 {
			t.Fatalf("%q: %+v, %v", s, g, err)
		}
		if err := bv.Set(bv.String()); err != nil || g.P != 0.01 || g.R != 0.3 {
			t.Errorf("%q: shown as %q, read back %+v (%v)", s, bv.String(), g, err)
		}
	}
	for s, want := range map[string]string{"1%": "want P,R", "1%,0": "for ever", "x,1%": "bad probability", "1%,2": "outside"} {
		if err := bv.Set(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
}
