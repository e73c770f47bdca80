package measure

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// maxListPoints bounds what a list or range may expand to.
const maxListPoints = 100000

// ParseSizes reads a list of sizes in bytes: comma-separated values and
// ranges START:END:STEP (END included when the steps land on it), as in
// "64,512,1472" or "64:1472:64". Sizes take the unit suffixes of -l
// ("1K" is 1024).
func ParseSizes(s string) ([]int, error) {
	var out []int
	err := parseList(s, func(v string) (int64, error) { return units.ParseSize(v) }, func(v int64) {
		out = append(out, int(v))
	})
	return out, err
}

// ParseDurations reads a list of durations the same way, as in
// "0:40us:1us" or "0,5us,12us"; a bare number is in µs, UDPmon's unit of
// spacing ("12" is 12 µs).
func ParseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	err := parseList(s, func(v string) (int64, error) {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			if n < 0 {
				return 0, fmt.Errorf("%q: must not be negative", v)
			}
			return int64(n * float64(time.Microsecond)), nil
		}
		d, err := units.ParseDuration(v)
		return int64(d), err
	}, func(v int64) { out = append(out, time.Duration(v)) })
	return out, err
}

func parseList(s string, parse func(string) (int64, error), emit func(int64)) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return fmt.Errorf("empty list")
	}
	n := 0
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		parts := strings.Split(item, ":")
		switch len(parts) {
		case 1:
			v, err := parse(item)
			if err != nil {
				return err
			}
			emit(v)
			n++
		case 3:
			var v [3]int64
			for i, p := range parts {
				x, err := parse(strings.TrimSpace(p))
				if err != nil {
					return fmt.Errorf("%q: %w", item, err)
				}
				v[i] = x
			}
			start, end, step := v[0], v[1], v[2]
			if step <= 0 || end < start {
				return fmt.Errorf("%q: want START:END:STEP with START <= END and STEP > 0", item)
			}
			if (end-start)/step+int64(n) >= maxListPoints {
				return fmt.Errorf("%q: more than %d points", item, maxListPoints)
			}
			for x := start; x <= end; x += step {
				emit(x)
				n++
			}
		default:
			return fmt.Errorf("%q: want a value or START:END:STEP", item)
		}
		if n > maxListPoints {
			return fmt.Errorf("more than %d points", maxListPoints)
		}
	}
	return nil
}
