package emit

import (
	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Helpers shared by the UDP text and JSON: sums of several streams'
// figures, and the loss attribution of a direction.

func isUDP(s spec.Spec) bool { return s.Protocol == spec.UDP }

// sumUDP adds up UDP figures of several streams (nil entries are skipped;
// the result is nil when all are). Counts add; the re-ordering extent is
// the largest. The jitter of a sum is the mean of the streams' jitters
// weighted by their samples, so a stream with few datagram pairs counts
// for little and one whose jitter is unknown (no samples) not at all;
// the sum's jitter is unknown only when every stream's is. The method and
// timestamp source carry over when all streams agree. Distributions
// (IPDV, PDV, OWD, spacing) cannot be added and are left out.
func sumUDP(us []*result.UDP) *result.UDP {
	var sum *result.UDP
	var weighted float64
	for _, u := range us {
		if u == nil {
			continue
		}
		if sum == nil {
			sum = &result.UDP{JitterMethod: u.JitterMethod, TimestampSource: u.TimestampSource}
		}
		sum.Sent += u.Sent
		sum.SendErrors += u.SendErrors
		sum.GSOSegments = max(sum.GSOSegments, u.GSOSegments)
		sum.Received += u.Received
		sum.Lost += u.Lost
		sum.Late += u.Late
		sum.Duplicates += u.Duplicates
		sum.Reordered += u.Reordered
		sum.ReorderMaxExtent = max(sum.ReorderMaxExtent, u.ReorderMaxExtent)
		sum.Expected += u.Expected
		sum.Invalid += u.Invalid
		sum.Forged += u.Forged
		sum.Provisional = sum.Provisional || u.Provisional
		sum.GROBatches += u.GROBatches
		if u.JitterSamples > 0 {
			weighted += finite(u.JitterMs) * float64(u.JitterSamples)
			sum.JitterSamples += u.JitterSamples
		}
		if sum.JitterMethod != u.JitterMethod {
			sum.JitterMethod = ""
		}
		if sum.TimestampSource != u.TimestampSource {
			sum.TimestampSource = ""
		}
	}
	if sum != nil && sum.JitterSamples > 0 {
		sum.JitterMs = weighted / float64(sum.JitterSamples)
	}
	return sum
}

// udpOf is a stream interval's UDP figures, nil when it has none.
func udpOf(si *result.StreamInterval) *result.UDP {
	if si == nil {
		return nil
	}
	return si.UDP
}

// streamUDP is a stream's UDP totals, nil when it has none.
func streamUDP(s *result.Stream) *result.UDP {
	if s == nil {
		return nil
	}
	return s.UDP
}

// rowUDP adds the UDP figures of the flows of row sent by role: the
// senders' and the receivers'.
func rowUDP(row result.IntervalRow, role string) (sent, received *result.UDP) {
	var s, r []*result.UDP
	for _, f := range row.Flows {
		if senderRoleOf(f.SenderRole) == role {
			s = append(s, udpOf(f.Sent))
			r = append(r, udpOf(f.Received))
		}
	}
	return sumUDP(s), sumUDP(r)
}

// directionUDP adds the stream totals of a direction's flows.
func directionUDP(d result.Direction) (sent, received *result.UDP) {
	var s, r []*result.UDP
	for _, f := range d.Flows {
		s = append(s, streamUDP(f.Sent))
		r = append(r, streamUDP(f.Received))
	}
	return sumUDP(s), sumUDP(r)
}

// endOf returns the end of r that has role, nil if neither has.
func endOf(r *result.Result, role string) *result.End {
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		if e.Role == role {
			return e
		}
	}
	return nil
}

// lossOf attributes a direction's lost datagrams with the receiving and
// the sending host's UDP counters. Both ends' counters are host-wide; the
// server's report says how many other tests it ran meanwhile.
func lossOf(r *result.Result, d result.Direction) figures.UDPLoss {
	sent, received := directionUDP(d)
	var lost, sendErrors int64
	var gso int
	if received != nil {
		lost = received.Lost
	}
	if sent != nil {
		sendErrors = sent.SendErrors
	}
	for _, f := range d.Flows {
		if f.Sent != nil && f.Sent.UDP != nil {
			gso = max(gso, f.Sent.UDP.GSOSegments)
		}
	}
	var recvHost, sendHost *result.SNMP
	if e := endOf(r, otherRole(d.SenderRole)); e != nil {
		recvHost = e.UDPCounters
	}
	if e := endOf(r, d.SenderRole); e != nil {
		sendHost = e.UDPCounters
	}
	concurrent := max(r.Local.ConcurrentTests, r.Remote.ConcurrentTests)
	return figures.AttributeUDPLoss(lost, sendErrors, recvHost, sendHost, concurrent, gso)
}

// safeUDP returns u, or a copy with its non-finite floats zeroed so that
// encoding/json accepts it.
func safeUDP(u *result.UDP) *result.UDP {
	if u == nil || udpFinite(u) {
		return u
	}
	c := *u
	c.JitterMs = finite(c.JitterMs)
	c.IPDV, c.PDV = safePercentiles(c.IPDV), safePercentiles(c.PDV)
	if c.OWD != nil {
		o := *c.OWD
		o.Relative = *safePercentiles(&o.Relative)
		o.AbsoluteUs = safePercentiles(o.AbsoluteUs)
		o.OffsetUs, o.ErrorBoundUs = finite(o.OffsetUs), finite(o.ErrorBoundUs)
		c.OWD = &o
	}
	if c.Spacing != nil {
		s := *c.Spacing
		s.MeanNs, s.ErrP50Ns, s.ErrP99Ns, s.ErrMaxNs = finite(s.MeanNs), finite(s.ErrP50Ns), finite(s.ErrP99Ns), finite(s.ErrMaxNs)
		c.Spacing = &s
	}
	return &c
}

func safePercentiles(p *result.Percentiles) *result.Percentiles {
	if p == nil {
		return nil
	}
	return &result.Percentiles{
		Count: p.Count, Min: finite(p.Min), Mean: finite(p.Mean), P50: finite(p.P50), P90: finite(p.P90),
		P99: finite(p.P99), P999: finite(p.P999), Max: finite(p.Max),
	}
}

// udpFinite reports whether every float in u is finite.
func udpFinite(u *result.UDP) bool {
	if u == nil {
		return true
	}
	fs := []float64{u.JitterMs}
	pct := func(p *result.Percentiles) {
		if p != nil {
			fs = append(fs, p.Min, p.Mean, p.P50, p.P90, p.P99, p.P999, p.Max)
		}
	}
	pct(u.IPDV)
	pct(u.PDV)
	if o := u.OWD; o != nil {
		pct(&o.Relative)
		pct(o.AbsoluteUs)
		fs = append(fs, o.OffsetUs, o.ErrorBoundUs)
	}
	if s := u.Spacing; s != nil {
		fs = append(fs, s.MeanNs, s.ErrP50Ns, s.ErrP99Ns, s.ErrMaxNs)
	}
	for _, f := range fs {
		if finite(f) != f {
			return false
		}
	}
	return true
}
