//go:build linux

package lab

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/lab/impair"
)

// TestAcceptIsochronous19ms: a unicast isochronous test (--isochronous
// 60:20m,0: 60 frames a second of 41,666 bytes, 29 datagrams of 1,448
// bytes back to back) over the 19 ms path (9.5 ms each way, 622 Mbit/s,
// a 256 KiB queue) for 3 s: 180 frames, 7.5 MB, bounded by wpRun's
// deadline too. The namespaces share one clock, so a frame's latency is
// its true delivery time, from its scheduled send to its last datagram's
// arrival.
//
// Every frame the sender sent arrives whole (the path loses nothing),
// and none faster than the path allows: the last of a frame's datagrams
// leaves the router no sooner than the whole frame's serialisation at
// the rate after the frame was due, and then takes the path's delay.
func TestAcceptIsochronous19ms(t *testing.T) {
	const rate, queue, length = 622e6, 256 << 10, 1448
	path := impair.Config{Delay: 9500 * time.Microsecond, Rate: rate, Overhead: FramingEthernet.Overhead, QueueLimit: queue}
	back := impair.Config{Delay: 9500 * time.Microsecond}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: back, RandStart: 5}, nil)
	a, b := l.Host("a"), l.Host("b")
	sp := wpUDPSpec(3 * time.Second)
	sp.Length = length
	sp.Isochronous = &isoch.Frames{FPS: 60, Mean: 20e6}
	res := wpRun(t, a, b, startServer(t, b), sp, nil)
	sent, got := wpUDPFlow(t, res)
	if sent.Frames == nil || got.Frames == nil {
		t.Fatalf("frames: sender %+v, receiver %+v", sent.Frames, got.Frames)
	}
	s, r := sent.Frames, got.Frames
	const datagrams = (41666 + length - 1) / length
	wire := datagrams * (length + 28 + FramingEthernet.Overhead) // UDP and IPv4 headers, Ethernet framing
	fastest := path.Delay + time.Duration(float64(wire)*8/rate*float64(time.Second))
	t.Logf("sender: %d frames (%d late, by up to %.1f ms); receiver: %d complete, %d incomplete, %d skipped, %d cut; latency %+v, frame jitter %.3f ms; no frame can take less than %v",
		s.Sent, s.Late, s.LateMaxMs, r.Complete, r.Incomplete, r.Skipped, r.Cut, *r.Latency, r.JitterMs, fastest)
	if s.Sent < 170 || r.Complete+r.Cut != s.Sent || r.Incomplete != 0 || r.Skipped != 0 || got.Lost != 0 {
		t.Errorf("%d frames sent; received %d complete, %d cut, %d incomplete, %d skipped, %d datagrams lost",
			s.Sent, r.Complete, r.Cut, r.Incomplete, r.Skipped, got.Lost)
	}
	if r.Negative != 0 || r.Latency == nil || r.Latency.Count != r.Complete {
		t.Fatalf("latency %+v of %d complete frames, %d negative: one clock, every complete frame timed", r.Latency, r.Complete, r.Negative)
	}
	if min := time.Duration(r.Latency.Min * 1e3); min < fastest {
		t.Errorf("a frame took %v, faster than the path allows (%v: the one-way delay %v and the frame's serialisation)", min, fastest, path.Delay)
	}
}
