package udpmon

import (
	"errors"
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// DefaultCount is the datagrams of a point when none is given: ten
// thousand keeps a sweep of hundreds of points to minutes (UDPmon's own
// runs used a million).
const DefaultCount = 10000

// Plan is a sweep as the user describes it: its grid and what every
// point's test shares. Running it is internal/runner/udpmonrun's.
type Plan struct {
	Sizes    []int           // UDP payload sizes, bytes
	Spacings []time.Duration // inter-datagram gaps; 0 sends as fast as possible
	Count    int64           // datagrams per point; 0 means DefaultCount
	Reverse  bool            // the server sends
	Window   int64           // -w on both ends; 0 lets the receiver ask for a large buffer
	NoGSO    bool
	// Spin busy-waits the end of each gap, as the client's --spin does
	// (package pace): exact gaps for a core. Points of spacing 0 have no
	// gap to hold.
	Spin bool
	TOS  int
	// LateThreshold is a datagram's grace before it counts lost; 0 is the
	// spec's default.
	LateThreshold time.Duration
	// PointTimeout bounds each point; 0 derives it from the count and the
	// spacing.
	PointTimeout time.Duration
}

// Spec is the native UDP test of one point: Count datagrams of size
// bytes, size × Count bytes in all, held at spacing by the sender, with
// both hosts' counters and the receiver's histograms.
func (c Plan) Spec(size int, spacing time.Duration) spec.Spec {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = size
	s.Spacing = spacing
	s.Bytes = c.PointCount() * int64(size)
	s.Duration = 0
	s.Interval = 0
	s.Reverse = c.Reverse
	s.Window = c.Window
	s.NoGSO = c.NoGSO
	s.Spin = c.Spin && spacing > 0
	s.TOS = c.TOS
	s.LateThreshold = c.LateThreshold
	s.HostCounters = true
	s.UDPHistograms = true
	return s
}

// PointCount is the datagrams of each point: Count, or DefaultCount.
func (c Plan) PointCount() int64 {
	if c.Count > 0 {
		return c.Count
	}
	return DefaultCount
}

// PointBound bounds a point: twice its sending time at the target
// spacing (at least 2 µs a datagram), plus the setup and drain.
func (c Plan) PointBound(spacing time.Duration) time.Duration {
	if c.PointTimeout > 0 {
		return c.PointTimeout
	}
	return 2*time.Duration(c.PointCount())*max(spacing, 2*time.Microsecond) + 20*time.Second
}

// Validate checks the sweep before it starts, each point's spec
// included.
func (c Plan) Validate() error {
	if len(c.Sizes) == 0 || len(c.Spacings) == 0 {
		return errors.New("a sweep needs at least one size and one spacing")
	}
	if n := len(c.Sizes) * len(c.Spacings); n > 100000 {
		return fmt.Errorf("%d points: at most 100000", n)
	}
	for _, sz := range c.Sizes {
		for _, sp := range c.Spacings {
			if err := c.Spec(sz, sp).Validate(); err != nil {
				return fmt.Errorf("size %d, spacing %v: %w", sz, sp, err)
			}
		}
	}
	return nil
}

// RouterCounts are a lab router's packets in and lost, cumulative, in
// each direction (lab.Counts; udpmon does not import lab, whose tests run
// sweeps).
type RouterCounts struct {
	InAtoB, LostAtoB, InBtoA, LostBtoA uint64
}

// DataDrops is what the router lost between two readings in the
// direction that carried a point's datagrams: the one that took more
// packets in (the other carries control packets at most).
func DataDrops(before, after RouterCounts) uint64 {
	d := func(b, a uint64) uint64 { return a - min(a, b) }
	if d(before.InAtoB, after.InAtoB) >= d(before.InBtoA, after.InBtoA) {
		return d(before.LostAtoB, after.LostAtoB)
	}
	return d(before.LostBtoA, after.LostBtoA)
}

// PointOf turns one point's test result into its figures; res may be nil
// (the point failed before it started). Size, spacing, count and the
// error are the caller's.
func PointOf(res *result.Result, reverse bool) Point { return PointOfAt(res, reverse, nil) }

// PointOfAt is PointOf with a lab router's drops in the point's direction
// over it, when known: its loss attribution then counts them.
func PointOfAt(res *result.Result, reverse bool, routerDrops *uint64) Point {
	p := Point{SenderRole: result.RoleClient}
	if reverse {
		p.SenderRole = result.RoleServer
	}
	if res == nil {
		return p
	}
	senderEnd, receiverEnd := &res.Local, &res.Remote
	if reverse {
		senderEnd, receiverEnd = &res.Remote, &res.Local
	}
	p.SenderHost, p.ReceiverHost = senderEnd.HostCounters, receiverEnd.HostCounters
	p.SenderSNMP, p.ReceiverSNMP = senderEnd.UDPCounters, receiverEnd.UDPCounters
	flows := res.Flows()
	if len(flows) == 0 {
		return p
	}
	f := flows[0]
	size := res.Spec.Length
	wire := float64(WireBytes(size) * 8)
	user := float64(size * 8)
	var sent *result.UDP
	if f.Sent != nil && f.Sent.UDP != nil {
		sent = f.Sent.UDP
		p.Sent, p.SendErrors = sent.Sent, sent.SendErrors
		if sp := sent.Spacing; sp != nil && sp.Samples > 1 {
			p.AchievedSpacingNs, p.AchievedSpacingP99Ns = sp.MeanNs, sp.GapP99Ns
			p.SpacingErrP50Ns, p.SpacingErrP99Ns, p.SpacingErrMaxNs = sp.ErrP50Ns, sp.ErrP99Ns, sp.ErrMaxNs
			p.SpacingNotHeld = !sp.Held()
		} else if sent.Sent > 1 && f.Sent.Seconds() > 0 {
			p.AchievedSpacingNs = f.Sent.Seconds() * 1e9 / float64(sent.Sent-1)
		}
		if p.AchievedSpacingNs > 0 {
			p.SentWireBps = wire / (p.AchievedSpacingNs / 1e9)
			p.SentUserBps = user / (p.AchievedSpacingNs / 1e9)
		}
	}
	if f.Received != nil && f.Received.UDP != nil {
		u := f.Received.UDP
		p.Received, p.Lost, p.Late, p.Duplicates = u.Received, u.Lost, u.Late, u.Duplicates
		p.Reordered, p.ReorderMaxExtent = u.Reordered, u.ReorderMaxExtent
		p.LossPercent = u.LostPercent()
		p.JitterMs = u.JitterMs
		p.TimestampSource = u.TimestampSource
		if u.OWD != nil {
			rel := u.OWD.Relative
			p.RelativeOWD = &rel
		} else if u.PDV != nil {
			p.RelativeOWD = u.PDV
		}
		arrivals, span := int64(0), 0.0
		for _, a := range receiverEnd.UDPArrivals {
			if a.StreamID == f.ID {
				arrivals, span = a.Received, a.Seconds()
				p.InterArrival, p.RelativeOWDHistogram = a.InterArrival, a.RelativeOWD
			}
		}
		if arrivals == 0 { // no arrival figures: the receiver's span
			arrivals, span = u.Received, f.Received.Seconds()
		}
		p.ReceiveSeconds = span
		// Datagrams cannot arrive faster than they were sent: arrivals
		// over a span shorter than the sending one were timestamped late
		// (read in batches after waiting in the socket buffer), so the
		// received rate is over the sending span then. Without this a
		// point read 59,849 Mb/s received against 24,777 sent.
		if sendSpan := p.AchievedSpacingNs * float64(p.Sent-1) / 1e9; p.Sent > 1 && span < sendSpan {
			span = sendSpan
		}
		if arrivals > 1 && span > 0 {
			p.RecvWireBps = float64(arrivals-1) * wire / span
			p.RecvUserBps = float64(arrivals-1) * user / span
		}
		var sendErrs int64
		gso := 0
		if sent != nil {
			sendErrs, gso = sent.SendErrors, sent.GSOSegments
		}
		a := figures.AttributeUDPLossAt(u.Lost, sendErrs, receiverEnd.UDPCounters, senderEnd.UDPCounters, res.Remote.ConcurrentTests, gso,
			figures.LossCounts{ReceiverSocket: u.SocketDrops, SocketBatches: u.SocketDropsGRO, Router: routerDrops})
		p.LossAttribution = &a
	}
	return p
}
