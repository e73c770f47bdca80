package psconfig

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
)

// isoDuration is pSConfig's Duration: weeks, days, hours, minutes and
// seconds, each optional and each a decimal (its schema has no years or
// months, which have no fixed length).
var isoDuration = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// maxDuration bounds what a template may ask for: a year is far beyond
// any repeat or test a mesh runs, and keeps the sum far from overflow.
const maxDuration = 366 * 24 * time.Hour

// ParseDuration reads an ISO 8601 duration as pSConfig writes them
// ("PT30S", "PT4H", "P1DT12H", "PT0.5S").
func ParseDuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" || s[len(s)-1] == 'T' {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT30S or P1DT12H", s)
	}
	units := []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second}
	var total float64
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		v, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %v", s, err)
		}
		total += v * float64(u)
	}
	if total > float64(maxDuration) || math.IsNaN(total) {
		return 0, fmt.Errorf("%q is longer than a year", s)
	}
	return time.Duration(math.Round(total)), nil
}

// ParseTimestamp reads an absolute ISO 8601 instant. pSConfig also allows
// a duration from "now" and "@R/P…" forms relative to when a template is
// read; those have no meaning in a file applied to a shared schedule, and
// the caller names them in a warning.
func ParseTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an absolute ISO 8601 instant such as 2026-03-01T00:00:00Z", s)
}
