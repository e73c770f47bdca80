package impair

import (
	"fmt"
	"strconv"
	"strings"
)

// Flag values (pflag.Value) for the lab's settings, parsed as ParseConfig
// parses them, so that a bad value fails while flags are parsed, with the
// flag's name. String reads back through Set to the same value, and Get
// returns the value itself, as flagvalue's values do.

// PercentValue is a probability, "0.1%" or "0.001".
type PercentValue struct{ P *float64 }

// Percent is a PercentValue over p.
func Percent(p *float64) PercentValue { return PercentValue{P: p} }

func (v PercentValue) Get() any { return *v.P }
func (v PercentValue) String() string {
	if v.P == nil || *v.P == 0 {
		return "0"
	}
	return strconv.FormatFloat(*v.P*100, 'g', -1, 64) + "%"
}
func (v PercentValue) Set(s string) error {
	p, err := ParsePercent(s)
	if err != nil {
		return err
	}
	*v.P = p
	return nil
}
func (PercentValue) Type() string { return "percent" }

// BurstLossValue is Gilbert burst loss "P,R" (or "P/R"): P the chance to
// enter a loss burst, R to leave it.
type BurstLossValue struct{ P **GilbertElliott }

// BurstLoss is a BurstLossValue over p.
func BurstLoss(p **GilbertElliott) BurstLossValue { return BurstLossValue{P: p} }

func (v BurstLossValue) Get() any { return *v.P }
func (v BurstLossValue) String() string {
	if v.P == nil || *v.P == nil {
		return ""
	}
	return fmt.Sprintf("%g,%g", (*v.P).P, (*v.P).R)
}
func (v BurstLossValue) Set(s string) error {
	ps, rs, ok := strings.Cut(s, ",")
	if !ok {
		ps, rs, ok = strings.Cut(s, "/")
	}
	if !ok {
		return fmt.Errorf("want P,R (e.g. 1%%,30%%), got %q", s)
	}
	p, err := ParsePercent(ps)
	if err != nil {
		return err
	}
	r, err := ParsePercent(rs)
	if err != nil {
		return err
	}
	if r == 0 && p > 0 {
		return fmt.Errorf("R 0 would make the first loss burst last for ever")
	}
	*v.P = Gilbert(p, r)
	return nil
}
func (BurstLossValue) Type() string { return "P,R" }
