package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxBurst is the largest packet burst ParseRateBurst accepts. iperf3 has
// the same cap, so a command line moves between the two unchanged.
const MaxBurst = 1000

// ParseRate parses bits per second with ParseSize's suffixes, each a power
// of 1000 whatever its case, as iperf3 reads -b: "750m" is 750e6 and "1G"
// is 1e9.
func ParseRate(s string) (float64, error) {
	return parseRate(s, allDecimal)
}

// ParseRateUpperBinary parses a rate as wireperf did before rates followed
// iperf3: upper-case suffixes are powers of 1024 ("1G" is 2^30). Only
// campaigns stored under that rule read their rates with it.
func ParseRateUpperBinary(s string) (float64, error) {
	return parseRate(s, upperBinary)
}

func parseRate(s string, rule suffixRule) (float64, error) {
	v, err := parseQuantity("rate", s, rule)
	if err != nil {
		return 0, err
	}
	f, _ := v.Float64()
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("invalid rate %q: too large", s)
	}
	return f, nil
}

// ParseRateBurst parses "RATE" or "RATE/BURST", iperf3's -b syntax. The
// burst is a packet count, 0 when absent.
func ParseRateBurst(s string) (rate float64, burst int, err error) {
	rateText, burstText, hasBurst := strings.Cut(s, "/")
	rate, err = ParseRate(rateText)
	if err != nil {
		return 0, 0, err
	}
	if !hasBurst {
		return rate, 0, nil
	}
	burst, err = strconv.Atoi(burstText)
	if err != nil || burst < 1 || burst > MaxBurst || !isDecimal(burstText) {
		return 0, 0, fmt.Errorf("invalid burst %q in %q: want a whole number of packets from 1 to %d", burstText, s, MaxBurst)
	}
	return rate, burst, nil
}
