package mcast

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/iperf2wire"
	"github.com/wireperf/wireperf/internal/pace"
)

// SendConfig is a sender's test.
type SendConfig struct {
	Length   int     // payload bytes per datagram, at least iperf2wire.MinPayload
	Rate     float64 // bit/s of payload; 0 sends as fast as the socket takes them
	Burst    int     // datagrams per pacing slot (-b RATE/BURST); 0 means the pacer's
	Duration time.Duration
	Bytes    int64 // stop after this many bytes instead of Duration, when > 0
	// Interval is the period of the sender's interval rows; 0 sends none.
	Interval time.Duration
	Port     int   // the destination port, as the client header names it
	TOS      uint8 // as the client header names it
	// Frames makes the traffic isochronous (iperf 2's --isochronous):
	// frames instead of a rate.
	Frames *Frames
}

// Check says what is wrong with c, if anything.
func (c SendConfig) Check() error {
	switch {
	case c.Length < iperf2wire.MinPayload || c.Length > 65507:
		return fmt.Errorf("-l %d: a multicast datagram carries %d to 65507 bytes", c.Length, iperf2wire.MinPayload)
	case c.Duration <= 0 && c.Bytes <= 0:
		return errors.New("a multicast sender needs an end: -t or -n")
	case c.Rate < 0:
		return errors.New("a negative rate")
	case c.Frames != nil && c.Length < iperf2wire.MinIsochPayload:
		return fmt.Errorf("-l %d: an isochronous datagram carries at least %d bytes (iperf 2's header and the frame's fields)", c.Length, iperf2wire.MinIsochPayload)
	case c.Frames != nil:
		return c.Frames.Check()
	}
	return nil
}

// SendRow is what the sender sent over one interval, or over the whole
// test (Final).
type SendRow struct {
	From, To  time.Duration // since the first datagram
	Datagrams int64
	Bytes     int64
	// Errors are sends the kernel refused (a full queue, ENOBUFS): those
	// datagrams were not sent, and their numbers were used again.
	Errors int64
	// Isoch (totals only, isochronous traffic) counts the frames.
	Isoch *IsochRow
	// WrittenOff (totals only) is what the schedule wrote off: datagrams
	// owed over a stall longer than pace.MaxDebtSpan, never sent, so that
	// catching up does not flood the path.
	WrittenOff int64
	Final      bool
}

// maxBatch is the most datagrams one release of the pacer may send.
const maxBatch = 64

// Send sends iperf 2 datagrams on c (a socket of Dial) until cfg's end,
// the last one numbered as iperf 2's FIN, and returns the totals. Each
// interval row goes to rows, if not nil, which the caller drains. A
// cancelled ctx stops the test early, still with its FIN.
func Send(ctx context.Context, c *SendConn, cfg SendConfig, rows chan<- SendRow) (SendRow, error) {
	if err := cfg.Check(); err != nil {
		return SendRow{}, err
	}
	buf := make([]byte, cfg.Length)
	hdr := iperf2wire.Header(iperf2wire.Test{Port: cfg.Port, Length: cfg.Length, Rate: cfg.Rate,
		Duration: cfg.Duration, Bytes: cfg.Bytes, TOS: cfg.TOS})
	start := time.Now()
	if err := iperf2wire.Put(buf, iperf2wire.Datagram{Seq: 1, Sent: start, Client: hdr}); err != nil {
		return SendRow{}, err
	}
	if cfg.Frames != nil {
		tot, iso, err := sendFrames(ctx, c, cfg, buf, start, rows)
		tot.Isoch = &iso
		return tot, err
	}
	pacer := pace.NewRate(pace.ForRate(cfg.Rate, cfg.Length, cfg.Burst))
	pacer.Start(start)
	stop := make(chan struct{})
	defer context.AfterFunc(ctx, func() { close(stop) })()

	var tot, row SendRow
	nextRow := cfg.Interval
	seq := int64(0)
	last := false
	emit := func(now time.Duration) {
		for cfg.Interval > 0 && now >= nextRow {
			row.From, row.To = nextRow-cfg.Interval, nextRow
			if rows != nil {
				rows <- row
			}
			row = SendRow{}
			nextRow += cfg.Interval
		}
	}
	for !last {
		n, ok := pacer.Next(stop, maxBatch)
		if !ok {
			n = 1 // cancelled: the FIN goes at once
		}
		sent := 0
		for i := 0; i < n && !last; i++ {
			now := time.Now()
			el := now.Sub(start)
			last = !ok || cfg.Bytes > 0 && tot.Bytes+int64(cfg.Length) >= cfg.Bytes ||
				cfg.Bytes <= 0 && el >= cfg.Duration
			num := seq + 1
			if last {
				num = -num
			}
			iperf2wire.PutSeq(buf, num, now)
			if _, err := c.WriteToUDP(buf, c.To); err != nil {
				if !transient(err) {
					return tot, err
				}
				tot.Errors++
				row.Errors++
				last = false
				break // the queue is full: wait for the next release
			}
			seq++
			sent++
			tot.Datagrams++
			tot.Bytes += int64(cfg.Length)
			row.Datagrams++
			row.Bytes += int64(cfg.Length)
			emit(el)
		}
		pacer.Sent(sent)
	}
	tot.To = time.Since(start)
	if cfg.Interval > 0 && row.Datagrams > 0 && rows != nil {
		row.From, row.To = nextRow-cfg.Interval, tot.To
		rows <- row
	}
	tot.Final = true
	tot.WrittenOff = pacer.WrittenOff()
	return tot, nil
}
