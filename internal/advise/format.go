package advise

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// Formatting for verdicts and advice: rates, sizes and times as a
// report reads them.

func rate(bps float64) string {
	if bps <= 0 {
		return "unknown"
	}
	return strings.TrimSpace(units.FormatRate(bps, units.AdaptiveBits))
}

// mbits is a rate in Mbit/s to a tenth, for figures held against the
// line-rate arithmetic (941.5 Mbits/sec on a 1 Gbit/s line), where
// three significant digits would round the difference away.
func mbits(bps float64) string { return strconv.FormatFloat(bps/1e6, 'f', 1, 64) + " Mbits/sec" }

// size prints bytes in decimal MB where large, as BDPs are usually given.
func size(b float64) string {
	switch {
	case b >= 1e6:
		return strconv.FormatFloat(b/1e6, 'f', 1, 64) + " MB"
	case b >= 1e3:
		return strconv.FormatFloat(b/1e3, 'f', 0, 64) + " kB"
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " B"
}

func ms(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	}
	return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + " ms"
}

// mib prints a buffer size in binary units, as sysctls are set.
func mib(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return strconv.FormatInt(b>>20, 10) + " MiB"
	}
	return strconv.FormatInt(b, 10) + " bytes"
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

// pct2 is a small share, to two decimals: loss rates.
func pct2(f float64) string { return strconv.FormatFloat(100*f, 'f', 2, 64) + "%" }

func pctp(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*p, 'f', 2, 64) + "%"
}

func us(v uint32) time.Duration { return time.Duration(v) * time.Microsecond }

// finite turns NaN and infinities into 0 for JSON.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
