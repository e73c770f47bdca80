package mcast

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/wireperf/wireperf/internal/iperf2wire"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// Receiver limits and defaults.
const (
	// DefaultMaxFlows is how many senders a receiver accounts for at once;
	// datagrams of further ones are counted (Receiver.Refused), not kept.
	DefaultMaxFlows = 16
	// DefaultIdleTimeout ends a flow whose sender went silent without its
	// FIN (lost, or a sender that was killed).
	DefaultIdleTimeout = 10 * time.Second
	// pollPeriod bounds how long a read waits before the receiver looks
	// at its context and its flows' deadlines again.
	pollPeriod  = 100 * time.Millisecond
	maxDatagram = 65536
)

// ReceiveConfig is a receiver's accounting.
type ReceiveConfig struct {
	// Interval is the period of each flow's interval rows; 0 gives none.
	Interval time.Duration
	// LateThreshold: a missing datagram counts as lost this long after a
	// later one arrived (stats.UDPConfig); 0 means 2 s.
	LateThreshold time.Duration
	// IdleTimeout ends a silent flow; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxFlows; 0 means DefaultMaxFlows.
	MaxFlows int
	// Once ends Receive when its first flow has ended.
	Once bool
}

// EventKind says what a FlowEvent is.
type EventKind int

// The kinds of event.
const (
	FlowStarted EventKind = iota
	FlowInterval
	FlowEnded
)

// FlowEvent is one sender's news: its first datagram, an interval row or
// its end.
type FlowEvent struct {
	Kind EventKind
	// Flow numbers the senders in the order they were first heard, from 1
	// (iperf 2's [  1]).
	Flow  int
	From  netip.AddrPort // the sender
	Group netip.AddrPort
	// Test is what the sender's client header says of its test, if it
	// sent one.
	Test *iperf2wire.ClientHeader
	// Start and End are the row's span since the flow's first datagram.
	Start, End time.Duration
	Bytes      int64
	UDP        result.UDP
	// ByFIN says the flow ended on its sender's last datagram (and so its
	// loss counts the tail); otherwise it went silent for the idle
	// timeout, or the receiver stopped.
	ByFIN bool
	// Frames is an isochronous sender's frames (FlowEnded only), nil for
	// other senders.
	Frames *FrameStats
}

type flow struct {
	id         int
	from       netip.AddrPort
	acct       *stats.UDPReceiver
	first      time.Time
	lastSeen   time.Time
	rowStart   time.Duration
	nextRow    time.Duration
	rowBytes   int64
	totalBytes int64
	frames     *frameAcct // an isochronous sender's, from its first frame
}

// Receiver accounts for the senders to one group on one socket.
type Receiver struct {
	cfg   ReceiveConfig
	group netip.AddrPort
	flows map[netip.AddrPort]*flow
	// ended holds senders whose FIN came, until their stragglers could
	// no longer be on the way, so that a re-ordered datagram behind a FIN
	// starts no new flow.
	ended  map[netip.AddrPort]time.Time
	nextID int
	// source is how arrivals are timed: "kernel" (SO_TIMESTAMPNS) or
	// "user-space".
	source  string
	invalid int64
	refused int64
}

// NewReceiver is a receiver of group's senders under cfg.
func NewReceiver(group netip.AddrPort, cfg ReceiveConfig) *Receiver {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxFlows <= 0 {
		cfg.MaxFlows = DefaultMaxFlows
	}
	if cfg.LateThreshold <= 0 {
		cfg.LateThreshold = 2 * time.Second
	}
	return &Receiver{cfg: cfg, group: group, source: "user-space", flows: map[netip.AddrPort]*flow{}, ended: map[netip.AddrPort]time.Time{}, nextID: 1}
}

// Invalid is how many datagrams were not iperf 2 datagrams (too short, a
// number of 0, a bad time).
func (r *Receiver) Invalid() int64 { return r.invalid }

// Refused is how many datagrams came from senders beyond MaxFlows.
func (r *Receiver) Refused() int64 { return r.refused }

// Run reads c (a socket of Listen) until ctx is done (or, with Once, the
// first flow has ended), sending each flow's events to events, which the
// caller drains. The flows still running when it stops end then, without
// their FIN.
func (r *Receiver) Run(ctx context.Context, c *net.UDPConn, events chan<- FlowEvent) error {
	buf, oob := make([]byte, maxDatagram), make([]byte, 128)
	r.source = "user-space"
	if udpflow.KernelTimestamps(c) {
		r.source = "kernel"
	}
	for {
		if ctx.Err() != nil {
			r.endAll(time.Now(), events)
			return nil
		}
		now := time.Now()
		_ = c.SetReadDeadline(r.deadline(now))
		n, oobn, _, from, err := c.ReadMsgUDPAddrPort(buf, oob)
		now = time.Now()
		if err == nil {
			if ns := udpflow.ReceiveTime(oob[:oobn]); ns > 0 {
				now = time.Unix(0, ns) // the kernel's arrival time: jitter without the reader's delays
			}
		}
		switch {
		case err == nil:
			if r.Add(buf[:n], from.Addr().Unmap(), from.Port(), now, events) && r.cfg.Once {
				r.endAll(now, events)
				return nil
			}
		case errors.Is(err, os.ErrDeadlineExceeded):
		default:
			if ctx.Err() != nil {
				continue
			}
			return err
		}
		if r.Tick(now, events) && r.cfg.Once {
			r.endAll(now, events)
			return nil
		}
	}
}

// deadline is the next instant a read must give way: a row's end, an
// idle flow's, or the poll period.
func (r *Receiver) deadline(now time.Time) time.Time {
	d := now.Add(pollPeriod)
	for _, f := range r.flows {
		if r.cfg.Interval > 0 {
			if t := f.first.Add(f.nextRow); t.Before(d) {
				d = t
			}
		}
	}
	return d
}

// Add accounts for one datagram from addr:port received at now, and says
// whether it ended its flow.
func (r *Receiver) Add(b []byte, addr netip.Addr, port uint16, now time.Time, events chan<- FlowEvent) (ended bool) {
	d, err := iperf2wire.Parse(b)
	if err != nil || d.Number() > int64(stats.MaxSeq) {
		r.invalid++
		return false
	}
	from := netip.AddrPortFrom(addr, port)
	f := r.flows[from]
	if f == nil {
		if t, ok := r.ended[from]; ok && now.Sub(t) < r.cfg.LateThreshold {
			return false // behind its flow's FIN: that flow's totals are out
		}
		delete(r.ended, from)
		if len(r.flows) >= r.cfg.MaxFlows {
			r.refused++
			return false
		}
		f = &flow{id: r.nextID, from: from, first: now, nextRow: r.cfg.Interval,
			acct: stats.NewUDPReceiver(stats.UDPConfig{LateThreshold: r.cfg.LateThreshold, TimestampSource: r.source})}
		r.nextID++
		r.flows[from] = f
		events <- FlowEvent{Kind: FlowStarted, Flow: f.id, From: from, Group: r.group, Test: d.Client}
	}
	r.rows(f, now, events)
	f.lastSeen = now
	invalid := f.acct.Invalid()
	f.acct.Add(stats.Arrival{Seq: uint64(d.Number() - 1), SentNs: d.Sent.UnixNano(), RecvNs: now.UnixNano()})
	f.rowBytes += int64(len(b))
	f.totalBytes += int64(len(b))
	// The FIN repeats the last frame's fields (iperf 2's does too) but is
	// none of its bytes.
	if fr, ok := iperf2wire.ParseIsoch(b); ok && !d.Last() && f.acct.Invalid() == invalid {
		if f.frames == nil {
			f.frames = newFrameAcct()
		}
		f.frames.add(fr, len(b), d.Sent, now)
	}
	if d.Last() {
		sent := d.Number()
		if f.acct.Invalid() != invalid {
			// A FIN numbered beyond any number the sender could have
			// reached (stats.MaxJump) is not believed: it would count a
			// hostile or corrupt sender's claim as loss.
			sent = -1
		}
		r.end(f, now, sent, events)
		r.ended[from] = now
		return true
	}
	return false
}

// Tick cuts the rows that are due and ends idle flows at now; it says
// whether a flow ended.
func (r *Receiver) Tick(now time.Time, events chan<- FlowEvent) (ended bool) {
	for _, f := range r.flows {
		r.rows(f, now, events)
		if now.Sub(f.lastSeen) >= r.cfg.IdleTimeout {
			r.end(f, now, -1, events)
			ended = true
		}
	}
	for from, t := range r.ended {
		if now.Sub(t) >= r.cfg.LateThreshold {
			delete(r.ended, from)
		}
	}
	return ended
}

// rows sends f's interval rows that ended by now.
func (r *Receiver) rows(f *flow, now time.Time, events chan<- FlowEvent) {
	if r.cfg.Interval <= 0 {
		return
	}
	for el := now.Sub(f.first); el >= f.nextRow; f.nextRow += r.cfg.Interval {
		u := f.acct.Cut(f.first.Add(f.nextRow).UnixNano())
		events <- FlowEvent{Kind: FlowInterval, Flow: f.id, From: f.from, Group: r.group,
			Start: f.rowStart, End: f.nextRow, Bytes: f.rowBytes, UDP: u}
		f.rowStart, f.rowBytes = f.nextRow, 0
	}
}

// end closes f at now; sent is the sender's count from its FIN, or -1.
func (r *Receiver) end(f *flow, now time.Time, sent int64, events chan<- FlowEvent) {
	endAt := now
	if sent < 0 {
		endAt = f.lastSeen // silent since: the flow's span ends at its last datagram
	}
	span := endAt.Sub(f.first)
	if r.cfg.Interval > 0 && f.rowBytes > 0 {
		u := f.acct.Cut(endAt.UnixNano())
		events <- FlowEvent{Kind: FlowInterval, Flow: f.id, From: f.from, Group: r.group,
			Start: f.rowStart, End: span, Bytes: f.rowBytes, UDP: u}
	}
	u := f.acct.Final(now.UnixNano(), sent)
	e := FlowEvent{Kind: FlowEnded, Flow: f.id, From: f.from, Group: r.group,
		End: span, Bytes: f.totalBytes, UDP: u, ByFIN: sent >= 0}
	if f.frames != nil {
		st := f.frames.final()
		e.Frames = &st
	}
	events <- e
	delete(r.flows, f.from)
}

func (r *Receiver) endAll(now time.Time, events chan<- FlowEvent) {
	for _, f := range r.flows {
		r.end(f, now, -1, events)
	}
}
