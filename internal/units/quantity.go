package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// suffixWant lists the suffixes in error messages.
const suffixWant = "want k, m, g, t, K, M, G or T"

// suffixRule is how a quantity reads its suffix's case.
type suffixRule int

const (
	// upperBinary: lower case is a power of 1000 and upper case of 1024,
	// as iperf reads sizes (and wireperf read rates before 1000 won).
	upperBinary suffixRule = iota
	// allDecimal: either case is a power of 1000, as iperf3 reads rates
	// (unit_atof_rate).
	allDecimal
)

// multiplier returns the factor a suffix stands for under rule.
func multiplier(suffix string, rule suffixRule) (*big.Int, bool) {
	if len(suffix) != 1 {
		return nil, suffix == "" // no suffix: a plain count
	}
	exp := strings.IndexByte("kmgt", suffix[0]|0x20) + 1 // 0 when unknown
	if exp == 0 {
		return nil, false
	}
	base := int64(1000)
	if suffix[0] < 'a' && rule == upperBinary {
		base = 1024
	}
	return new(big.Int).Exp(big.NewInt(base), big.NewInt(int64(exp)), nil), true
}

// parseQuantity reads a non-negative decimal number with an optional
// suffix, read under rule, and returns its exact value; kind names the
// quantity in errors. Exact arithmetic keeps "1.5G" from picking up float
// rounding.
func parseQuantity(kind, s string, rule suffixRule) (*big.Rat, error) {
	bad := func(why string) error { return fmt.Errorf("invalid %s %q: %s", kind, s, why) }
	if s == "" {
		return nil, bad("empty")
	}
	if s[0] == '-' {
		return nil, bad("must not be negative")
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	num, suffix := s[:i], s[i:]
	if !isDecimal(num) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, bad("not a finite number")
		}
		return nil, bad("not a number")
	}
	mult, ok := multiplier(suffix, rule)
	if !ok {
		return nil, bad(fmt.Sprintf("unknown suffix %q (%s)", suffix, suffixWant))
	}
	v, ok := new(big.Rat).SetString(num)
	if !ok { // unreachable after isDecimal; kept so a grammar slip cannot panic
		return nil, bad("not a number")
	}
	if mult != nil {
		v.Mul(v, new(big.Rat).SetInt(mult))
	}
	return v, nil
}

// isDecimal reports whether s is digits with at most one decimal point
// and at least one digit: no sign, exponent, hex or spaces.
func isDecimal(s string) bool {
	digits, points := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			points++
		default:
			return false
		}
	}
	return digits > 0 && points <= 1
}

// roundRat rounds a non-negative v to the nearest integer, halves up.
func roundRat(v *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if m.Lsh(m, 1).Cmp(v.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
