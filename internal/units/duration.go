package units

import (
	"fmt"
	"math/big"
	"time"
)

// ParseDuration parses a plain number of seconds ("10", "0.5"), as iperf's
// -t and -i take them, or a Go duration with a unit ("12us", "215ms",
// "1m30s", "2h"). Negative durations are rejected; plain seconds are
// rounded to the nearest nanosecond.
func ParseDuration(s string) (time.Duration, error) {
	bad := func(why string) error { return fmt.Errorf("invalid duration %q: %s", s, why) }
	switch {
	case s == "":
		return 0, bad("empty")
	case s[0] == '-':
		return 0, bad("must not be negative")
	case isDecimal(s):
		v, _ := new(big.Rat).SetString(s)
		ns := roundRat(v.Mul(v, big.NewRat(int64(time.Second), 1)))
		if !ns.IsInt64() {
			return 0, bad("too long")
		}
		return time.Duration(ns.Int64()), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, bad(`want seconds ("10", "0.5") or a number with a unit ("215ms", "1m30s")`)
	}
	return d, nil
}
