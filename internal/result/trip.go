package result

import "math"

// TripTimes is a TCP receiver's write-to-read latencies (--trip-times,
// iperf2's meaning): each block's (each -l write's) time from the
// sender's stamp before its write to the receiver's read of its last
// byte. The two ends' clocks are compared as they stand: the figures mean
// what one-way delay means without a clock comparison (docs/metrics.md,
// "One-way delay"), and Negative counts the blocks that arrived before
// they were sent, which says the clocks disagree.
type TripTimes struct {
	Count   int64   `json:"count"`
	MeanUs  float64 `json:"mean_us"`
	MinUs   float64 `json:"min_us"`
	MaxUs   float64 `json:"max_us"`
	StdevUs float64 `json:"stdev_us"`
	// Histogram is the non-negative latencies' distribution, from an HDR
	// histogram (two significant digits).
	Histogram *Percentiles `json:"histogram_us,omitempty"`
	Negative  int64        `json:"negative,omitempty"`
	// BadBlocks counts blocks without a stamp, or out of sequence: a peer
	// that did not stamp, or bytes lost to the stream's order.
	BadBlocks int64 `json:"bad_blocks,omitempty"`
}

// Unsynchronised reports whether the figures show the clocks disagree.
func (t *TripTimes) Unsynchronised() bool { return t != nil && t.Negative > 0 }

// InFlightBytes is Little's law's bytes in flight: the delivery rate
// (bytes over seconds) times the mean latency, as iperf2's inP.
func (t *TripTimes) InFlightBytes(bytes int64, seconds float64) float64 {
	if t == nil || t.Count == 0 || seconds <= 0 || t.MeanUs <= 0 {
		return 0
	}
	return float64(bytes) / seconds * t.MeanUs / 1e6
}

// JoinTripTimes is the figures of two sets of blocks as one (two
// adjacent rows, or two streams' rows for a [SUM]): counts add up, the
// mean and stdev are the pooled ones, the extremes the wider. The
// histogram's percentiles cannot be pooled, so a joined row keeps one
// only when one of the two rows timed every block. A new value: neither
// argument is changed.
func JoinTripTimes(a, b *TripTimes) *TripTimes {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil || a.Count == 0 && a.BadBlocks == 0 && a.Negative == 0:
		c := *b
		return &c
	case b == nil || b.Count == 0 && b.BadBlocks == 0 && b.Negative == 0:
		c := *a
		return &c
	}
	j := TripTimes{Count: a.Count + b.Count, Negative: a.Negative + b.Negative, BadBlocks: a.BadBlocks + b.BadBlocks}
	switch {
	case a.Count == 0:
		j.MeanUs, j.MinUs, j.MaxUs, j.StdevUs, j.Histogram = b.MeanUs, b.MinUs, b.MaxUs, b.StdevUs, b.Histogram
	case b.Count == 0:
		j.MeanUs, j.MinUs, j.MaxUs, j.StdevUs, j.Histogram = a.MeanUs, a.MinUs, a.MaxUs, a.StdevUs, a.Histogram
	default:
		na, nb, n := float64(a.Count), float64(b.Count), float64(j.Count)
		j.MeanUs = (a.MeanUs*na + b.MeanUs*nb) / n
		d := b.MeanUs - a.MeanUs
		m2 := a.StdevUs*a.StdevUs*(na-1) + b.StdevUs*b.StdevUs*(nb-1) + d*d*na*nb/n
		j.StdevUs = math.Sqrt(max(m2, 0) / (n - 1))
		j.MinUs, j.MaxUs = min(a.MinUs, b.MinUs), max(a.MaxUs, b.MaxUs)
	}
	if j.Histogram != nil {
		h := *j.Histogram
		j.Histogram = &h
	}
	return &j
}
