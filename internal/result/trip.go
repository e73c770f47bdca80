package result

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
