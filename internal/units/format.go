package units

import (
	"fmt"
	"strings"
)

// Format is an iperf -f unit letter: 'a' adaptive bits (the default), 'A'
// adaptive bytes, 'b', 'k', 'm', 'g', 't' a fixed bit unit and 'B', 'K',
// 'M', 'G', 'T' a fixed byte unit. The zero Format, and any letter
// ParseFormat would refuse, render as 'a'.
type Format byte

// The adaptive formats; the fixed ones are their letters.
const (
	AdaptiveBits  Format = 'a'
	AdaptiveBytes Format = 'A'
)

// formatLetters are the letters -f takes, scale order within each case.
const formatLetters = "abkmgtABKMGT"

// ParseFormat parses a -f argument: one letter from "abkmgtABKMGT".
func ParseFormat(s string) (Format, error) {
	if len(s) != 1 || !strings.Contains(formatLetters, s) {
		return 0, fmt.Errorf("invalid format %q: want one of a, b, k, m, g, t (bits) or A, B, K, M, G, T (bytes); a and A pick the unit to fit", s)
	}
	return Format(s[0]), nil
}

// String returns the letter.
func (f Format) String() string { return string(rune(f.normal())) }

// normal maps the zero and unknown Formats to the default.
func (f Format) normal() Format {
	if f == 0 || !strings.ContainsRune(formatLetters, rune(f)) {
		return AdaptiveBits
	}
	return f
}

// Bytes reports whether f counts in bytes rather than bits.
func (f Format) Bytes() bool {
	n := f.normal()
	return n >= 'A' && n <= 'Z'
}

// scale is the fixed unit's power (0 for b/B up to 4 for t/T), or -1 for
// an adaptive format.
func (f Format) scale() int {
	n := f.normal() | 0x20 // lower case
	if n == 'a' {
		return -1
	}
	return strings.IndexByte("bkmgt", byte(n))
}
