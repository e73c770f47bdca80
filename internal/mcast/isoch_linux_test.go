package mcast

import (
	"context"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/mcast/mcasttest"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// TestIsochronousOurs: our isochronous sender to our receiver: every
// frame sent whole arrives whole, and the receiver's frame count is the
// sender's (the last frame may be cut by the test's end).
func TestIsochronousOurs(t *testing.T) {
	mcasttest.NeedRoot(t)
	ns := mcasttest.OneHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g := Group{Addr: netip.MustParseAddrPort("239.39.6.1:5006")}
	var wg sync.WaitGroup
	recv := startReceiver(t, ctx, ns, g, true, &wg)
	var c *SendConn
	mcasttest.InNetns(t, ns, func() (err error) { c, err = Dial(g, SendOptions{TTL: 1}); return err })
	defer c.Close()
	tot, err := Send(ctx, c, SendConfig{Length: 1200, Duration: time.Second, Port: 5006,
		Frames: &Frames{FPS: 25, Mean: 4e6, Stdev: 1e6, IPG: 20 * time.Microsecond, RNGState: 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wgWaitOne(t, ctx, recv)
	e := ended(t, recv)
	if len(e) != 1 || e[0].Frames == nil {
		t.Fatalf("%d flows, frames %v: want one isochronous flow", len(e), len(e) == 1 && e[0].Frames != nil)
	}
	f, iso := e[0].Frames, tot.Isoch
	t.Logf("sent %d frames whole (%d skipped); received %+v", iso.Frames, iso.Slipped, *f)
	if e[0].UDP.Lost != 0 || f.Complete != iso.Frames || f.Frames-f.Complete > 1 || f.Incomplete != f.Frames-f.Complete {
		t.Errorf("received %+v with %d lost; the sender sent %d frames whole", *f, e[0].UDP.Lost, iso.Frames)
	}
	if iso.Frames+iso.Slipped < 20 || f.LatencyMinMs <= 0 || f.LatencyMaxMs < f.LatencyMeanMs {
		t.Errorf("%d frames in 1 s at 25 a second, latencies %+v", iso.Frames+iso.Slipped, *f)
	}
}

var iperfIsochLine = regexp.MustCompile(`(?m)^\[ *\d+\] 0\.0+-[\d.]+ sec .* (\d+)/(\d+) \(`)

// TestIsochronousIperf2: iperf 2's isochronous sender to our receiver
// (whose frames it numbers), and ours to iperf 2's receiver, which takes
// our datagrams as an isochronous test's and counts every one.
func TestIsochronousIperf2(t *testing.T) {
	mcasttest.NeedRoot(t)
	bin := iperf2(t)
	ns := mcasttest.OneHost(t)
	t.Run("iperf2 sends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		g := Group{Addr: netip.MustParseAddrPort("239.39.6.2:5007")}
		var wg sync.WaitGroup
		recv := startReceiver(t, ctx, ns, g, true, &wg)
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", ns, bin, "-c", "239.39.6.2", "-u", "-T", "1", "-p", "5007",
			"-t", "1", "-l", "1000", "--isochronous=20:2m,0").CombinedOutput()
		if err != nil {
			t.Fatalf("iperf: %v\n%s", err, out)
		}
		wgWaitOne(t, ctx, recv)
		e := ended(t, recv)
		if len(e) != 1 || e[0].Frames == nil {
			t.Fatalf("%d flows, no frames seen:\n%s", len(e), out)
		}
		f := e[0].Frames
		t.Logf("iperf 2: %s; we saw %+v", strings.TrimSpace(string(out[strings.LastIndex(string(out[:len(out)-1]), "\n")+1:])), *f)
		// 20 frames a second of 2 Mbit/s: 12,500 bytes each, for 1 s.
		if e[0].UDP.Lost != 0 || f.Complete < 15 || f.Frames-f.Complete > 1 {
			t.Errorf("frames %+v, %d lost: want about 20 whole", *f, e[0].UDP.Lost)
		}
	})
	t.Run("we send", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out := &syncbuf.Buffer{}
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, bin, "-s", "-u", "-e", "-B", "239.39.6.3", "-p", "5008")
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		if !waitFor(ctx, func() bool {
			m, _ := exec.Command("ip", "-n", ns, "maddr", "show", "dev", "v0").Output()
			return strings.Contains(string(m), "239.39.6.3")
		}) {
			t.Fatalf("iperf did not join:\n%s", out)
		}
		var c *SendConn
		mcasttest.InNetns(t, ns, func() (err error) {
			c, err = Dial(Group{Addr: netip.MustParseAddrPort("239.39.6.3:5008")}, SendOptions{TTL: 1})
			return err
		})
		defer c.Close()
		tot, err := Send(ctx, c, SendConfig{Length: 1000, Duration: time.Second, Port: 5008, Frames: &Frames{FPS: 20, Mean: 2e6}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var m []string
		if !waitFor(ctx, func() bool { m = iperfIsochLine.FindStringSubmatch(out.String()); return m != nil }) {
			t.Fatalf("iperf printed no final report:\n%s", out)
		}
		lost, _ := strconv.ParseInt(m[1], 10, 64)
		total, _ := strconv.ParseInt(m[2], 10, 64)
		if !strings.Contains(out.String(), "(isoch)") || lost != 0 || total != tot.Datagrams {
			t.Errorf("iperf 2 counted %d lost of %d (we sent %d), isochronous: %v\n%s", lost, total, tot.Datagrams, strings.Contains(out.String(), "(isoch)"), out)
		}
	})
}
