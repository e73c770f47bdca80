package result

// JoinStreamIntervals adds a row's stream figures to the row before it,
// stream by stream: counts add up, figures sampled at a row's end
// (window, RTT, jitter, backlog) are the later row's. It changes into's
// elements in place and returns into, grown by streams it lacked.
func JoinStreamIntervals(into, next []StreamInterval) []StreamInterval {
	for _, n := range next {
		i := 0
		for i < len(into) && (into[i].ID != n.ID || into[i].Sender != n.Sender) {
			i++
		}
		if i == len(into) {
			into = append(into, n)
			continue
		}
		a := &into[i]
		a.Bytes += n.Bytes
		a.AppBytes += n.AppBytes
		a.OutOfOrder += n.OutOfOrder
		a.Delivered += n.Delivered
		a.Retransmits += n.Retransmits
		a.Calls += n.Calls
		a.Backlog = n.Backlog
		a.KernelCounted = a.KernelCounted || n.KernelCounted
		a.HasDelivered = a.HasDelivered || n.HasDelivered
		if n.HasTCPInfo {
			a.HasTCPInfo = true
			a.CwndBytes, a.SndWnd, a.RTTus, a.RTTVarus, a.PMTU = n.CwndBytes, n.SndWnd, n.RTTus, n.RTTVarus, n.PMTU
		}
		a.UDP = JoinUDP(a.UDP, n.UDP)
		a.TripTimes = JoinTripTimes(a.TripTimes, n.TripTimes)
	}
	return into
}

// JoinUDP is the UDP figures of two adjacent rows as one: a new value,
// neither argument is changed.
func JoinUDP(a, b *UDP) *UDP {
	if a == nil || b == nil {
		if b != nil {
			c := *b
			return &c
		}
		return a
	}
	u := *a
	u.Sent += b.Sent
	u.SendErrors += b.SendErrors
	u.Received += b.Received
	u.Lost += b.Lost
	u.Late += b.Late
	u.Duplicates += b.Duplicates
	u.Reordered += b.Reordered
	u.Expected += b.Expected
	u.Invalid += b.Invalid
	u.Forged += b.Forged
	u.JitterSamples += b.JitterSamples
	u.GROBatches += b.GROBatches
	u.ReorderMaxExtent = max(u.ReorderMaxExtent, b.ReorderMaxExtent)
	u.Provisional = u.Provisional || b.Provisional
	u.JitterMs, u.JitterMethod, u.TimestampSource = b.JitterMs, b.JitterMethod, b.TimestampSource
	u.Frames = JoinFrames(a.Frames, b.Frames)
	// Distributions and the pacing verdicts of single rows do not add up.
	u.IPDV, u.PDV, u.OWD, u.Spacing, u.Schedule = nil, nil, nil, nil, nil
	return &u
}
