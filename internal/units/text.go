package units

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The functions below print a quantity as a person would type it on the
// command line: the shortest text that the matching Parse function reads
// back to exactly the same value. Help texts and saved settings use them,
// so a default shown as "512M" is the 536870912 bytes the flag holds.

// SizeString prints a byte count with the largest suffix that divides it
// exactly ("512M", "64k", "1500"). At equal length a binary suffix wins,
// as sizes are usually powers of two.
func SizeString(n int64) string {
	if decimal := exactWithSuffix(n, "kmgt", 1000); len(decimal) < len(exactWithSuffix(n, "KMGT", 1024)) {
		return decimal
	}
	return exactWithSuffix(n, "KMGT", 1024)
}

// RateString prints bits per second the way ParseRate reads them ("1g",
// "622m", "2.5", "1073741824"): a lower-case decimal suffix or none, as
// a rate's suffixes are all powers of 1000.
func RateString(bps float64) string {
	if bps >= 0 && bps == math.Trunc(bps) && bps <= math.MaxInt64/2 {
		return exactWithSuffix(int64(bps), "kmgt", 1000)
	}
	return strconv.FormatFloat(bps, 'f', -1, 64)
}

// exactWithSuffix prints n with the suffix that gives the shortest exact
// text; the suffixes are the powers of base, in order.
func exactWithSuffix(n int64, suffixes string, base int64) string {
	best := strconv.FormatInt(n, 10)
	if n == 0 {
		return best
	}
	mult := int64(1)
	for _, s := range suffixes {
		if mult > math.MaxInt64/base {
			break
		}
		mult *= base
		if n%mult != 0 {
			break
		}
		if text := strconv.FormatInt(n/mult, 10) + string(s); len(text) < len(best) {
			best = text
		}
	}
	return best
}

// DurationString prints d as ParseDuration reads it: "0", "10s",
// "500ms", "1m30s", "24h" (time.Duration's text without its trailing
// zero minutes and seconds).
func DurationString(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
