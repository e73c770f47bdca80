package mcastrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/wireperf/wireperf/internal/mcast"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// Server is a multicast receiver as the server command describes it:
// iperf 2's `-s -u -B GROUP[%DEV] [-H SOURCE]`.
type Server struct {
	Group    string // -B: GROUP or GROUP%DEV
	Source   string // -H: a source-specific join's sender; "" for any source
	Port     int
	Interval time.Duration // -i; 0 prints no rows
	Format   units.Format
	JSON     bool // one JSON line for each sender's end
	Once     bool // -1: stop after the first sender's end
	// IdleTimeout ends a sender's flow that went silent without its last
	// datagram; 0 means mcast.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Joined, when set, is called once the group is joined and the port
	// bound (the -D copy's notice that it serves).
	Joined func()
}

// group reads s's group and source.
func (s Server) group() (mcast.Group, error) {
	a, dev, err := mcast.SplitAddr(s.Group)
	if err != nil {
		return mcast.Group{}, fmt.Errorf("-B %s: %v", s.Group, err)
	}
	if !a.IsMulticast() {
		return mcast.Group{}, fmt.Errorf("-B %s: %w", s.Group, errNoGroup)
	}
	if s.Port < 1 || s.Port > 65535 {
		return mcast.Group{}, fmt.Errorf("-p %d: a multicast receiver needs a port, 1 to 65535", s.Port)
	}
	g := mcast.Group{Addr: netip.AddrPortFrom(a, uint16(s.Port)), Interface: dev}
	if s.Source != "" {
		src, err := netip.ParseAddr(s.Source)
		if err != nil {
			return g, fmt.Errorf("-H %s: not an IP address", s.Source)
		}
		g.Source = src.Unmap()
	}
	if err := g.Check(); err != nil {
		return g, fmt.Errorf("-B %s -H %s: %w", s.Group, s.Source, err)
	}
	return g, nil
}

// Check says what is wrong with s's flags, if anything.
func (s Server) Check() error {
	_, err := s.group()
	return err
}

// Run joins the group and reports each sender it hears to w until ctx is
// done (or, with Once, the first sender's end).
func (s Server) Run(ctx context.Context, w io.Writer) error {
	g, err := s.group()
	if err != nil {
		return err
	}
	conn, err := mcast.Listen(ctx, g)
	if err != nil {
		return fmt.Errorf("multicast receiver of %v: %w", g.Addr, err)
	}
	defer conn.Close()
	if s.Joined != nil {
		s.Joined()
	}
	p := &receiverReport{w: w, format: s.Format, json: s.JSON}
	p.header(g)
	r := mcast.NewReceiver(g.Addr, mcast.ReceiveConfig{Interval: s.Interval, Once: s.Once, IdleTimeout: s.IdleTimeout})
	events := make(chan mcast.FlowEvent, 64)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for e := range events {
			p.event(e)
		}
	}()
	err = r.Run(ctx, conn, events)
	close(events)
	<-printed
	if n := r.Invalid() + r.Refused(); n > 0 && !s.JSON {
		p.printf("%d datagrams were not a test's (%d not iperf 2 datagrams, %d from senders beyond %d at once)\n",
			n, r.Invalid(), r.Refused(), mcast.DefaultMaxFlows)
	}
	if err != nil {
		return err
	}
	return p.err
}

// receiverReport prints the receiver's side: per sender, iperf 2's
// columns.
type receiverReport struct {
	w      io.Writer
	format units.Format
	json   bool
	err    error
}

func (p *receiverReport) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *receiverReport) header(g mcast.Group) {
	if p.json {
		return
	}
	p.printf("------------------------------------------------------------\n")
	p.printf("Server listening on UDP port %d\n", g.Addr.Port())
	on := ""
	if g.Interface != "" {
		on = " on " + g.Interface
	}
	if g.Source.IsValid() {
		p.printf("Joining multicast (S,G)=%v,%v%s\n", g.Source, g.Addr.Addr(), on)
	} else {
		p.printf("Joining multicast group %v%s\n", g.Addr.Addr(), on)
	}
	p.printf("Each sender is reported on its own; a multicast receiver sends nothing back\n")
	p.printf("------------------------------------------------------------\n")
}

// FlowReport is a sender's end as -J prints it, one JSON line each.
type FlowReport struct {
	Flow    int        `json:"flow"`
	Sender  string     `json:"sender"`
	Group   string     `json:"group"`
	Seconds float64    `json:"seconds"`
	Bytes   int64      `json:"bytes"`
	Bps     float64    `json:"bits_per_second"`
	UDP     result.UDP `json:"udp"`
	// EndedBy is "fin" (the sender's last datagram, so the tail's loss
	// is counted) or "idle" (silent; datagrams after the last received
	// are not counted lost).
	EndedBy string `json:"ended_by"`
	// Frames is an isochronous sender's frames.
	Frames *mcast.FrameStats `json:"frames,omitempty"`
}

func (p *receiverReport) event(e mcast.FlowEvent) {
	switch e.Kind {
	case mcast.FlowStarted:
		if !p.json {
			p.printf("[%3d] local %v connected with %v\n", e.Flow, e.Group, e.From)
			p.printf("[ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total Datagrams\n")
		}
	case mcast.FlowInterval:
		if !p.json {
			p.row(e)
		}
	case mcast.FlowEnded:
		if p.json {
			r := FlowReport{Flow: e.Flow, Sender: e.From.String(), Group: e.Group.String(), Seconds: e.End.Seconds(),
				Bytes: e.Bytes, Bps: bps(e.Bytes, e.End), UDP: e.UDP, EndedBy: "fin", Frames: e.Frames}
			if !e.ByFIN {
				r.EndedBy = "idle"
			}
			if p.err == nil {
				p.err = json.NewEncoder(p.w).Encode(r)
			}
			return
		}
		p.row(e)
		if e.UDP.Reordered > 0 {
			p.printf("[%3d] %s  %d datagrams received out-of-order\n", e.Flow, span(0, e.End), e.UDP.Reordered)
		}
		if e.UDP.Duplicates > 0 || e.UDP.Late > 0 {
			p.printf("[%3d] %s  %d duplicates, %d late (counted lost)\n", e.Flow, span(0, e.End), e.UDP.Duplicates, e.UDP.Late)
		}
		if f := e.Frames; f != nil {
			p.printf("[%3d] %s  frames: %d, %d complete, %d incomplete, %d skipped by the sender; latency of a whole frame %.3f/%.3f/%.3f ms (min/mean/max), jitter %.3f ms\n",
				e.Flow, span(0, e.End), f.Frames, f.Complete, f.Incomplete, f.Skipped, f.LatencyMinMs, f.LatencyMeanMs, f.LatencyMaxMs, f.JitterMs)
		}
		if !e.ByFIN {
			p.printf("[%3d] no believable last datagram from the sender (silent for the idle timeout, or a count it could not have sent): what it sent after the last one received is not counted\n", e.Flow)
		}
	}
}

func (p *receiverReport) row(e mcast.FlowEvent) {
	u := e.UDP
	jitter := "   n/a  "
	if u.JitterSamples > 0 {
		jitter = fmt.Sprintf("%6.3f ms", u.JitterMs)
	}
	pct := 0.0
	if u.Expected > 0 {
		pct = 100 * float64(u.Lost) / float64(u.Expected)
	}
	p.printf("[%3d] %s  %s  %s  %s %d/%d (%.2g%%)\n", e.Flow, span(e.Start, e.End),
		units.FormatTransfer(float64(e.Bytes), p.format), units.FormatRate(bps(e.Bytes, e.End-e.Start), p.format),
		jitter, u.Lost, u.Expected, pct)
}

func bps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) * 8 / d.Seconds()
}
