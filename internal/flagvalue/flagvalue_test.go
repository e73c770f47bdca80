package flagvalue

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/units"
)

// TestValuesRoundTrip: each value's String reads back to the same value,
// as help shows it as the default.
func TestValuesRoundTrip(t *testing.T) {
	var (
		size   int64
		dur    time.Duration
		rate   float64
		format units.Format
		tos    int
	)
	for _, c := range []struct {
		v  pflag.Value
		in string
	}{
		{Size(&size), "16M"}, {Duration(&dur), "1.5"}, {Rate(&rate), "622m"}, {Format(&format), "m"},
		{TOS(&tos), "0x10"}, {DSCP(&tos), "EF"},
	} {
		if err := c.v.Set(c.in); err != nil {
			t.Fatalf("%s %q: %v", c.v.Type(), c.in, err)
		}
		g := c.v.(interface{ Get() any })
		before := g.Get()
		if err := c.v.Set(c.v.String()); err != nil || g.Get() != before {
			t.Errorf("%s: %q read back as %v, want %v (%v)", c.v.Type(), c.v.String(), g.Get(), before, err)
		}
	}
	if size != 16<<20 || dur != 1500*time.Millisecond || rate != 622e6 || tos != 46<<2 {
		t.Errorf("size %d, duration %v, rate %v, tos %d", size, dur, rate, tos)
	}
	for _, c := range []struct {
		v    pflag.Value
		in   string
		want string
	}{
		{TOS(&tos), "256", "want 0 to 255"}, {DSCP(&tos), "64", "want 0 to 63"}, {Size(&size), "x", ""},
	} {
		err := c.v.Set(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want an error with %q", c.v.Type(), c.in, err, c.want)
		}
	}
}
