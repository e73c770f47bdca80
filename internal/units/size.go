package units

import (
	"fmt"
	"math"
)

// ParseSize parses a byte count: "131072", "16M", "64k", "1.5G". Lower-case
// suffixes are powers of 1000 and upper-case ones powers of 1024, so
// "-w 16M" is 16 MiB. A fraction of a byte is rounded to the nearest byte.
func ParseSize(s string) (int64, error) {
	v, err := parseQuantity("size", s, upperBinary)
	if err != nil {
		return 0, err
	}
	n := roundRat(v)
	if !n.IsInt64() {
		return 0, fmt.Errorf("invalid size %q: too large (at most %d bytes)", s, int64(math.MaxInt64))
	}
	return n.Int64(), nil
}
