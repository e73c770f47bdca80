// Package mcastrun runs a multicast test, iperf 2's way: the client's
// sender to a group and the server's receiver of a group, each printing
// its own report (text as iperf 2's, or JSON), since no control channel
// joins them: a multicast receiver sends nothing back (docs/multicast.md).
package mcastrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"time"

	"github.com/wireperf/wireperf/internal/mcast"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/units"
)

// IsGroup reports whether a client's destination or a server's -B is a
// multicast group (ADDR or ADDR%DEV): the test is then a multicast one.
func IsGroup(host string) bool { return mcast.IsGroup(host) }

// DefaultTTL is iperf 2's: the datagrams stay on the sender's link
// unless asked.
const DefaultTTL = 1

// ClientTTL is the TTL a client's flags ask for: --ttl, or -T when it is
// a whole number from 0 to 255 (iperf 2's -T, which is iperf3's title
// elsewhere: iperf3 has no multicast test, so a number given to -T
// before a group can only mean iperf 2's TTL), or DefaultTTL.
func ClientTTL(c *measure.Client) (ttl int, title string, err error) {
	title = c.Spec.Title
	if c.TTL != 0 {
		return c.TTL, title, nil
	}
	if n, err := strconv.Atoi(title); err == nil {
		if n < 0 || n > 255 {
			return 0, "", fmt.Errorf("-T %d: a multicast TTL is 0 to 255", n)
		}
		return n, "", nil
	}
	return DefaultTTL, title, nil
}

// clientGroup checks that c describes a test a multicast sender can run,
// and returns its group and socket options.
func clientGroup(c *measure.Client, host string) (mcast.Group, mcast.SendOptions, error) {
	s := &c.Spec
	refuse := func(what, why string) error { return fmt.Errorf("%s: %s (multicast group %s)", what, why, host) }
	switch {
	case !c.UDP:
		return mcast.Group{}, mcast.SendOptions{}, refuse("TCP", "a multicast test is UDP; add -u")
	case s.Reverse || s.Bidir:
		return mcast.Group{}, mcast.SendOptions{}, refuse("-R and --bidir", "a multicast receiver sends nothing back")
	case s.Streams > 1:
		return mcast.Group{}, mcast.SendOptions{}, refuse("-P", "one sender a group; run a client for each")
	case c.Iperf3:
		return mcast.Group{}, mcast.SendOptions{}, refuse("--iperf3", "iperf3 has no multicast test")
	case s.Spacing > 0:
		return mcast.Group{}, mcast.SendOptions{}, refuse("--spacing", "a multicast sender holds a rate (-b or --pps)")
	case s.Omit > 0:
		return mcast.Group{}, mcast.SendOptions{}, refuse("-O", "each receiver counts from the first datagram it hears")
	case c.File != "" || s.ZeroCopy:
		return mcast.Group{}, mcast.SendOptions{}, refuse("-F and -Z", "a multicast sender sends its own datagrams")
	case c.JSONStream || c.ReportStyle != "" || c.Enhanced:
		return mcast.Group{}, mcast.SendOptions{}, refuse("--json-stream, -y C and -e", "a multicast sender prints text or -J")
	}
	addr, dev, err := mcast.SplitAddr(host)
	if err != nil {
		return mcast.Group{}, mcast.SendOptions{}, err
	}
	if c.BindDevice != "" {
		if dev != "" && dev != c.BindDevice {
			return mcast.Group{}, mcast.SendOptions{}, fmt.Errorf("-X %s and %s: two interfaces", c.BindDevice, host)
		}
		dev = c.BindDevice
	}
	if (c.IPv4 && !addr.Is4()) || (c.IPv6 && addr.Is4()) {
		return mcast.Group{}, mcast.SendOptions{}, fmt.Errorf("-4/-6: group %v is of the other family", addr)
	}
	g := mcast.Group{Addr: netip.AddrPortFrom(addr, uint16(c.Port)), Interface: dev}
	ttl, _, err := ClientTTL(c)
	if err != nil {
		return g, mcast.SendOptions{}, err
	}
	opt := mcast.SendOptions{TTL: ttl, TOS: int(s.TOS)}
	if c.Bind != "" {
		b, bdev, err := mcast.SplitAddr(c.Bind)
		if err != nil {
			return g, opt, fmt.Errorf("-B %s: %v", c.Bind, err)
		}
		if bdev != "" && g.Interface != "" && bdev != g.Interface {
			return g, opt, fmt.Errorf("-B %s: another interface than %s", c.Bind, g.Interface)
		}
		if bdev != "" {
			g.Interface = bdev
		}
		if b.Is4() != addr.Is4() {
			return g, opt, fmt.Errorf("-B %s: not the group's address family", c.Bind)
		}
		opt.Bind = b
	}
	return g, opt, g.Check()
}

// sendConfig is the sender's test from the client's flags.
func sendConfig(c *measure.Client) (mcast.SendConfig, error) {
	s := &c.Spec
	cfg := mcast.SendConfig{Length: s.Length, Rate: s.Rate, Burst: s.Burst, Duration: s.Duration,
		Bytes: s.Bytes, Interval: s.Interval, Port: c.Port, TOS: uint8(s.TOS)}
	if s.PPS > 0 {
		cfg.Rate = float64(s.PPS) * float64(s.Length) * 8
	}
	if f := s.Isochronous; f != nil { // measure checked it, and the rate flags against it
		cfg.Frames, cfg.Rate = f, f.Mean
	}
	return cfg, cfg.Check()
}

// Client sends c's test to the group host (ADDR or ADDR%DEV) and writes
// the sender's report to w.
func Client(ctx context.Context, c *measure.Client, host string, w io.Writer) error {
	g, opt, err := clientGroup(c, host)
	if err != nil {
		return err
	}
	cfg, err := sendConfig(c)
	if err != nil {
		return err
	}
	conn, err := mcast.Dial(g, opt)
	if err != nil {
		return fmt.Errorf("multicast sender to %v: %w", g.Addr, err)
	}
	defer conn.Close()
	_, title, _ := ClientTTL(c)
	local, _ := netip.ParseAddrPort(conn.LocalAddr().String())
	p := &senderReport{w: w, format: c.Format, json: c.JSON, title: title, group: g, ttl: opt.TTL, local: local, cfg: cfg}
	p.header()
	rows := make(chan mcast.SendRow, 16)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for r := range rows {
			p.row(r)
		}
	}()
	tot, err := mcast.Send(ctx, conn, cfg, rows)
	close(rows)
	<-printed
	if err != nil {
		return fmt.Errorf("multicast sender to %v: %w", g.Addr, err)
	}
	return p.final(tot)
}

// senderReport prints the sender's side.
type senderReport struct {
	w      io.Writer
	format units.Format
	json   bool
	title  string
	group  mcast.Group
	ttl    int
	local  netip.AddrPort
	cfg    mcast.SendConfig
	rows   []senderRowJSON
	err    error
}

type senderRowJSON struct {
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Bytes     int64   `json:"bytes"`
	Datagrams int64   `json:"datagrams"`
	Bps       float64 `json:"bits_per_second"`
	Errors    int64   `json:"send_errors,omitempty"`
	// WrittenOff is the sender's totals only (mcast.SendRow).
	WrittenOff int64 `json:"written_off,omitempty"`
}

func (p *senderReport) printf(format string, a ...any) {
	if p.err != nil {
		return
	}
	if p.title != "" {
		_, p.err = io.WriteString(p.w, p.title+":  ")
	}
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *senderReport) header() {
	if p.json {
		return
	}
	dev := ""
	if p.group.Interface != "" {
		dev = " on " + p.group.Interface
	}
	p.printf("------------------------------------------------------------\n")
	p.printf("Client sending to multicast group %v, UDP port %d%s\n", p.group.Addr.Addr(), p.group.Addr.Port(), dev)
	rate := "as fast as possible"
	if p.cfg.Rate > 0 {
		rate = "at " + units.FormatRate(p.cfg.Rate, p.format)
	}
	if f := p.cfg.Frames; f != nil {
		rate = fmt.Sprintf("in %g frames a second of %s on average (deviation %s, log-normal), %v apart within a frame",
			f.FPS, units.FormatRate(f.Mean, p.format), units.FormatRate(f.Stdev, p.format), f.IPG)
	}
	p.printf("Sending %d byte datagrams %s, TTL %d (iperf 2's datagrams: its receivers count them too)\n", p.cfg.Length, rate, p.ttl)
	p.printf("------------------------------------------------------------\n")
	p.printf("[  1] local %v connected with %v\n", p.local, p.group.Addr)
	p.printf("[ ID] Interval       Transfer     Bandwidth\n")
}

func (p *senderReport) row(r mcast.SendRow) {
	secs := (r.To - r.From).Seconds()
	bps := 0.0
	if secs > 0 {
		bps = float64(r.Bytes) * 8 / secs
	}
	if p.json {
		p.rows = append(p.rows, senderRowJSON{Start: r.From.Seconds(), End: r.To.Seconds(), Bytes: r.Bytes, Datagrams: r.Datagrams, Bps: bps, Errors: r.Errors})
		return
	}
	p.printf("[  1] %s  %s  %s\n", span(r.From, r.To), units.FormatTransfer(float64(r.Bytes), p.format), units.FormatRate(bps, p.format))
}

func (p *senderReport) final(tot mcast.SendRow) error {
	secs := tot.To.Seconds()
	bps := 0.0
	if secs > 0 {
		bps = float64(tot.Bytes) * 8 / secs
	}
	if p.json {
		doc := struct {
			Group     string          `json:"group"`
			Interface string          `json:"interface,omitempty"`
			Local     string          `json:"local"`
			TTL       int             `json:"ttl"`
			Length    int             `json:"length"`
			Rate      float64         `json:"rate_asked,omitempty"`
			Intervals []senderRowJSON `json:"intervals"`
			Sent      senderRowJSON   `json:"sent"`
			Note      string          `json:"note"`
			Frames    *mcast.IsochRow `json:"frames,omitempty"`
		}{p.group.Addr.String(), p.group.Interface, p.local.String(), p.ttl, p.cfg.Length, p.cfg.Rate, p.rows,
			senderRowJSON{End: secs, Bytes: tot.Bytes, Datagrams: tot.Datagrams, Bps: bps, Errors: tot.Errors, WrittenOff: tot.WrittenOff}, noReceiverReports, tot.Isoch}
		if p.rows == nil {
			doc.Intervals = []senderRowJSON{}
		}
		enc := json.NewEncoder(p.w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	p.printf("[  1] %s  %s  %s  sender\n", span(0, tot.To), units.FormatTransfer(float64(tot.Bytes), p.format), units.FormatRate(bps, p.format))
	p.printf("[  1] Sent %d datagrams\n", tot.Datagrams)
	if tot.Errors > 0 {
		p.printf("[  1] %d sends refused by a full queue (ENOBUFS), sent again\n", tot.Errors)
	}
	if iso := tot.Isoch; iso != nil {
		p.printf("[  1] %d frames sent whole, %d skipped because the sender was a period late\n", iso.Frames, iso.Slipped)
	}
	if tot.WrittenOff > 0 {
		p.printf("[  1] %d datagrams written off the schedule: the sender stalled for more than %v (a busy host), and catching up would flood\n", tot.WrittenOff, pace.MaxDebtSpan)
	}
	p.printf("[  1] %s\n", noReceiverReports)
	return p.err
}

const noReceiverReports = "no receiver's report: a multicast receiver sends nothing back; each prints its own loss, jitter and order"

func span(from, to time.Duration) string {
	return fmt.Sprintf("%.2f-%.2f sec", from.Seconds(), to.Seconds())
}

// errNoGroup is a server's -B that is not a group.
var errNoGroup = errors.New("not a multicast group")
