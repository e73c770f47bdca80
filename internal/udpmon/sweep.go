package udpmon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// A point the server refuses as busy is asked again busyRetries times,
// busyWait apart, before it counts as failed.
const (
	busyRetries = 3
	busyWait    = 500 * time.Millisecond
)

// ErrRecurs marks a point's error that every later point would meet too,
// such as the server refusing the test for a reason other than being
// busy. Config.Run wraps such errors in it; the sweep stops at the first,
// as it does when the connection is refused.
var ErrRecurs = errors.New("every point would fail the same way")

// recurs reports whether err would fail every later point as well.
func recurs(err error) bool {
	return errors.Is(err, ErrRecurs) || errors.Is(err, syscall.ECONNREFUSED)
}

// DefaultCount is the datagrams of a point when none is given: ten
// thousand keeps a sweep of hundreds of points to minutes (UDPmon's own
// runs used a million).
const DefaultCount = 10000

// Config is a sweep.
type Config struct {
	// Server names the server in the report ("host port 5201").
	Server string
	Logger *slog.Logger

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
	// OnPoint, if set, is called after each point with the progress so
	// far and an estimate of the time left.
	OnPoint func(p *Point, done, total int, eta time.Duration)
	// Client reaches the server: each point is a test of its own over it,
	// with the point's spec.
	Client session.ClientConfig
	// Run, when set, runs a point instead of session.RunClient over
	// Client: the tests' way to sweep without a server.
	Run func(ctx context.Context, s spec.Spec) (*result.Result, error)
	// Router, when set, reads a lab router's counters once they cover
	// end: the sweep reads them before the first point and after each, and
	// puts the router's drops in the point's loss attribution beside the
	// receiving socket's. Run through a lab, the command sets it from
	// lab.WatchRouter.
	Router func(end time.Time) (RouterCounts, error)
}

// RouterCounts are a lab router's packets in and lost, cumulative, in
// each direction (lab.Counts; udpmon does not import lab, whose tests run
// sweeps).
type RouterCounts struct {
	InAtoB, LostAtoB, InBtoA, LostBtoA uint64
}

// dataDrops is what the router lost between two readings in the
// direction that carried a point's datagrams: the one that took more
// packets in (the other carries control packets at most).
func dataDrops(before, after RouterCounts) uint64 {
	d := func(b, a uint64) uint64 { return a - min(a, b) }
	if d(before.InAtoB, after.InAtoB) >= d(before.InBtoA, after.InBtoA) {
		return d(before.LostAtoB, after.LostAtoB)
	}
	return d(before.LostBtoA, after.LostBtoA)
}

// runPoint is a point's test against the server. A refusal other than
// "busy" (a limit, a setting the server cannot apply) would meet every
// point, so it ends the sweep (ErrRecurs).
func (c Config) runPoint(ctx context.Context, s spec.Spec) (*result.Result, error) {
	cc := c.Client
	cc.Spec = s
	res, err := session.RunClient(ctx, cc)
	if errors.Is(err, control.ErrRefused) && !strings.Contains(err.Error(), "busy") {
		err = fmt.Errorf("%w (%w)", err, ErrRecurs)
	}
	return res, err
}

// Spec is the native UDP test of one point: Count datagrams of size
// bytes, size × Count bytes in all, held at spacing by the sender, with
// both hosts' counters and the receiver's histograms.
func (c Config) Spec(size int, spacing time.Duration) spec.Spec {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = size
	s.Spacing = spacing
	s.Bytes = c.count() * int64(size)
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

func (c Config) count() int64 {
	if c.Count > 0 {
		return c.Count
	}
	return DefaultCount
}

// pointTimeout bounds a point: twice its sending time at the target
// spacing (at least 2 µs a datagram), plus the setup and drain.
func (c Config) pointTimeout(spacing time.Duration) time.Duration {
	if c.PointTimeout > 0 {
		return c.PointTimeout
	}
	return 2*time.Duration(c.count())*max(spacing, 2*time.Microsecond) + 20*time.Second
}

// Validate checks the sweep before it starts, each point's spec
// included.
func (c Config) Validate() error {
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

// Run runs the sweep: every spacing for each size, in the order given. A
// point that fails (a timeout, a busy server) is recorded with its error
// and the sweep goes on; cancelling ctx ends it after the running point,
// which then counts as failed. A failure that would recur at every point
// (the connection refused, the test refused: see ErrRecurs) ends the
// sweep at once, without recording that point, and is returned. Otherwise
// the error is ctx's, or nil.
func Run(ctx context.Context, cfg Config) (*Sweep, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	run := cfg.Run
	if run == nil {
		run = cfg.runPoint
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	sw := &Sweep{Server: cfg.Server, StartedAt: time.Now(), Reverse: cfg.Reverse, Count: cfg.count()}
	total := len(cfg.Sizes) * len(cfg.Spacings)
	var routerBefore *RouterCounts
	if cfg.Router != nil {
		if c, err := cfg.Router(time.Now()); err == nil {
			routerBefore = &c
		} else {
			logger.Info("udpmon: the lab router's counters cannot be read; loss is attributed without them", "err", err)
		}
	}
	for _, size := range cfg.Sizes {
		for _, spacing := range cfg.Spacings {
			if ctx.Err() != nil {
				sw.Seconds = time.Since(sw.StartedAt).Seconds()
				return sw, ctx.Err()
			}
			start := time.Now()
			var res *result.Result
			var err error
			for try := 0; ; try++ {
				pctx, cancel := context.WithTimeout(ctx, cfg.pointTimeout(spacing))
				res, err = run(pctx, cfg.Spec(size, spacing))
				if err == nil && pctx.Err() != nil {
					err = fmt.Errorf("timed out after %v", cfg.pointTimeout(spacing))
				}
				cancel()
				// A server still finishing the previous point (or busy with
				// others) refuses before anything ran: wait and ask again.
				if res != nil || err == nil || !strings.Contains(err.Error(), "busy") || try == busyRetries || ctx.Err() != nil {
					break
				}
				logger.Info("udpmon: server busy, retrying the point", "size", size, "spacing", spacing)
				select {
				case <-time.After(busyWait):
				case <-ctx.Done():
				}
			}
			if err != nil && recurs(err) {
				sw.Seconds = time.Since(sw.StartedAt).Seconds()
				return sw, err
			}
			var routerDrops *uint64
			if routerBefore != nil {
				if c, err := cfg.Router(time.Now()); err == nil {
					d := dataDrops(*routerBefore, c)
					routerDrops, routerBefore = &d, &c
				} else {
					routerBefore = nil
				}
			}
			p := PointOfAt(res, cfg.Reverse, routerDrops)
			p.Size, p.Spacing, p.Count = size, spacing, cfg.count()
			p.Seconds = time.Since(start).Seconds()
			if err != nil {
				p.Error = err.Error()
				sw.Failed++
				// The point carries its error into every report (the
				// table's row and footer, CSV, JSON): on stderr as well
				// it would be said three times.
				logger.Info("udpmon point failed", "size", size, "spacing", spacing, "err", err)
			}
			sw.Points = append(sw.Points, p)
			if cfg.OnPoint != nil {
				done := len(sw.Points)
				eta := time.Duration(float64(time.Since(sw.StartedAt)) / float64(done) * float64(total-done))
				cfg.OnPoint(&sw.Points[done-1], done, total, eta)
			}
		}
	}
	sw.Seconds = time.Since(sw.StartedAt).Seconds()
	return sw, nil
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
