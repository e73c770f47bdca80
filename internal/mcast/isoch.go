package mcast

import (
	"context"
	"time"

	"github.com/wireperf/wireperf/internal/iperf2wire"
	"github.com/wireperf/wireperf/internal/isoch"
)

// Frames is an isochronous sender's traffic (package isoch).
type Frames = isoch.Frames

// IsochRow adds an isochronous sender's frame counts to its totals.
type IsochRow struct {
	Frames int64 `json:"frames"` // frames sent whole
	// Slipped is frames the sender skipped because it was later than a
	// whole period (iperf 2's slip): never sent, and counted by no
	// receiver as lost.
	Slipped int64 `json:"skipped"`
}

// sendFrames is Send's loop for isochronous traffic: frame k is due at
// k periods after the start; its datagrams go IPG apart, each carrying
// the frame's fields, the last of the test as its FIN.
func sendFrames(ctx context.Context, c *SendConn, cfg SendConfig, buf []byte, start time.Time, rows chan<- SendRow) (SendRow, IsochRow, error) {
	f := *cfg.Frames
	period := f.Period()
	sizer := isoch.NewSizer(f)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	wait := func(until time.Time) bool {
		d := time.Until(until)
		if d <= 0 {
			return ctx.Err() == nil
		}
		timer.Reset(d)
		select {
		case <-timer.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var tot, row SendRow
	var iso IsochRow
	nextRow := cfg.Interval
	fields := iperf2wire.Isoch{Period: period.Truncate(time.Microsecond), Start: start}
	seq := int64(0)
	done := func(now time.Time) bool {
		return ctx.Err() != nil || cfg.Bytes > 0 && tot.Bytes >= cfg.Bytes || cfg.Bytes <= 0 && now.Sub(start) >= cfg.Duration
	}
	send := func(n int, last bool, now time.Time) error {
		num := seq + 1
		if last {
			num = -num
		}
		iperf2wire.PutSeq(buf, num, now)
		iperf2wire.PutIsoch(buf, fields)
		for {
			_, err := c.WriteToUDP(buf[:n], c.To)
			if err == nil {
				break
			}
			if !transient(err) {
				return err
			}
			tot.Errors++
			row.Errors++
			if !wait(time.Now().Add(time.Millisecond)) { // a full queue: a frame's datagrams are not dropped but delayed
				return nil
			}
		}
		seq++
		tot.Datagrams++
		tot.Bytes += int64(n)
		row.Datagrams++
		row.Bytes += int64(n)
		for el := now.Sub(start); cfg.Interval > 0 && el >= nextRow; nextRow += cfg.Interval {
			row.From, row.To = nextRow-cfg.Interval, nextRow
			if rows != nil {
				rows <- row
			}
			row = SendRow{}
		}
		return nil
	}
	frame := uint32(0)
	for k := int64(0); ; k++ {
		var skip int64
		k, skip = f.Slip(start, time.Now(), k)
		iso.Slipped += skip
		due := f.Due(start, k)
		if !wait(due) || done(time.Now()) {
			break
		}
		fields.PrevFrame, fields.Frame = frame, uint32(k+1)
		frame = fields.Frame
		size := sizer.Next(iperf2wire.MinIsochPayload)
		fields.BurstSize = uint32(size)
		for remaining := size; remaining > 0; {
			now := time.Now()
			if done(now) {
				break
			}
			n := min(remaining, cfg.Length)
			if remaining-n > 0 && remaining-n < iperf2wire.MinIsochPayload {
				n = remaining - iperf2wire.MinIsochPayload // the frame's last datagram still carries its fields
			}
			n = max(n, iperf2wire.MinIsochPayload)
			fields.Remaining = uint32(remaining)
			if err := send(n, false, now); err != nil {
				return tot, iso, err
			}
			remaining = max(remaining-n, 0) // a short tail went padded to the fields' length
			if remaining == 0 {
				iso.Frames++
			} else if f.IPG > 0 && !wait(now.Add(f.IPG)) {
				break
			}
		}
	}
	// The FIN: a datagram of -l bytes, numbered as the test's last.
	fields.Remaining = 0
	if err := send(cfg.Length, true, time.Now()); err != nil {
		return tot, iso, err
	}
	tot.To = time.Since(start)
	if cfg.Interval > 0 && row.Datagrams > 0 && rows != nil {
		row.From, row.To = nextRow-cfg.Interval, tot.To
		rows <- row
	}
	tot.Final = true
	return tot, iso, nil
}
