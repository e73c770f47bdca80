package stats

// OffsetSample is one NTP-style exchange on the control channel, in ns:
// the client sends at T1 (client clock), the server receives at T2 and
// replies at T3 (server clock), the client receives at T4.
type OffsetSample struct {
	T1, T2, T3, T4 int64
}

// EstimateOffset estimates the server's clock minus the client's from the
// exchange with the smallest round trip, RTT = (T4-T1) - (T3-T2): queueing
// only ever adds delay, so the fastest exchange is the least distorted.
// offset = ((T2-T1) + (T3-T4)) / 2 is exact if the path is symmetric; the
// true offset lies within ± RTT/2 of it whatever the asymmetry, which is
// the error bound.
//
// For UDPReceiver.SetClockOffset the offset must be the receiver's clock
// minus the sender's: use it as is when the server receives the data, and
// negated when the client does. ok is false if no sample has a
// non-negative RTT (clocks stepped, or no samples).
func EstimateOffset(samples []OffsetSample) (offsetNs, errorBoundNs int64, ok bool) {
	best := -1
	var bestRTT int64
	for i, s := range samples {
		rtt := (s.T4 - s.T1) - (s.T3 - s.T2)
		if rtt < 0 || s.T4 < s.T1 || s.T3 < s.T2 {
			continue
		}
		if best < 0 || rtt < bestRTT {
			best, bestRTT = i, rtt
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	s := samples[best]
	// Halve each term before adding: the sum of two large terms must not
	// overflow. The halves' remainders are added back, so this equals
	// ((T2-T1)+(T3-T4))/2 rounded toward zero for ordinary values.
	a, b := s.T2-s.T1, s.T3-s.T4
	return a/2 + b/2 + (a%2+b%2)/2, bestRTT / 2, true
}
