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

// iperf2 is Debian's iperf 2 (2.1.8 here), or a skip.
func iperf2(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("iperf")
	if err != nil {
		t.Skip("iperf 2 (/usr/bin/iperf, Debian's iperf package) is not installed: no interop test")
	}
	out, _ := exec.Command(p, "-v").CombinedOutput()
	if !strings.Contains(string(out), "iperf version 2.") {
		t.Skipf("%s is not iperf 2: %s", p, out)
	}
	return p
}

// waitFor polls cond every 20 ms until it holds or ctx ends: a bounded
// poll of another process's state, which sends no event.
func waitFor(ctx context.Context, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

var iperfLossRE = regexp.MustCompile(`(?m)^\[ *\d+\] 0\.0+-[\d.]+ sec .* (\d+)/(\d+) \(`)

// TestIperf2ReceivesOurs: iperf 2's receiver (`iperf -s -u -B GROUP`)
// counts every datagram our sender sent, in both families.
func TestIperf2ReceivesOurs(t *testing.T) {
	mcasttest.NeedRoot(t)
	bin := iperf2(t)
	ns := mcasttest.OneHost(t)
	for _, tc := range []struct{ name, group, bind, maddr, dev string }{
		{"IPv4", "239.39.2.1", "239.39.2.1", "239.39.2.1", ""},
		{"IPv6", "ff3e::3902", "ff3e::3902%v0", "ff3e::3902", "v0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out := &syncbuf.Buffer{}
			args := []string{"netns", "exec", ns, bin, "-s", "-u", "-B", tc.bind, "-p", "5003"}
			if tc.dev != "" {
				args = append(args, "-V")
			}
			cmd := exec.CommandContext(ctx, "ip", args...)
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			joined := waitFor(ctx, func() bool {
				m, _ := exec.Command("ip", "-n", ns, "maddr", "show", "dev", "v0").Output()
				return strings.Contains(string(m), tc.maddr)
			})
			if !joined {
				t.Fatalf("iperf did not join %s:\n%s", tc.group, out)
			}
			var c *SendConn
			mcasttest.InNetns(t, ns, func() (err error) {
				c, err = Dial(Group{Addr: netip.AddrPortFrom(netip.MustParseAddr(tc.group), 5003), Interface: tc.dev}, SendOptions{TTL: 1})
				return err
			})
			defer c.Close()
			const n, length = 400, 1200
			tot, err := Send(ctx, c, SendConfig{Length: length, Rate: 8e6, Bytes: n * length, Port: 5003}, nil)
			if err != nil || tot.Datagrams != n {
				t.Fatalf("sent %d datagrams (%v), want %d", tot.Datagrams, err, n)
			}
			var m []string
			if !waitFor(ctx, func() bool { m = iperfLossRE.FindStringSubmatch(out.String()); return m != nil }) {
				t.Fatalf("iperf printed no final report:\n%s", out)
			}
			lost, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			if lost != 0 || total != n {
				t.Errorf("iperf 2 counted %d lost of %d, want 0 of %d:\n%s", lost, total, n, out)
			}
		})
	}
}

var iperfSentRE = regexp.MustCompile(`Sent (\d+) datagrams`)

// TestWeReceiveIperf2: our receivers count what iperf 2's sender
// (`iperf -c GROUP -u -T 1`) sent: every datagram, numbered as its FIN
// says, in both families. iperf 2.1.8's own "Sent N datagrams" is one
// more than the datagrams it sent (its receiver counts N-1 too).
func TestWeReceiveIperf2(t *testing.T) {
	mcasttest.NeedRoot(t)
	bin := iperf2(t)
	ns := mcasttest.OneHost(t)
	for _, tc := range []struct{ name, group, dest, dev string }{
		{"IPv4", "239.39.3.1", "239.39.3.1", ""},
		{"IPv6", "ff3e::3903", "ff3e::3903%v0", "v0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			ga := netip.AddrPortFrom(netip.MustParseAddr(tc.group), 5004)
			var wg sync.WaitGroup
			recv := startReceiver(t, ctx, ns, Group{Addr: ga, Interface: tc.dev}, true, &wg)
			args := []string{"netns", "exec", ns, bin, "-c", tc.dest, "-u", "-T", "1", "-t", "1", "-b", "2m", "-l", "1000", "-p", "5004"}
			if tc.dev != "" {
				args = append(args, "-V")
			}
			out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
			if err != nil {
				t.Fatalf("iperf: %v\n%s", err, out)
			}
			m := iperfSentRE.FindStringSubmatch(string(out))
			if m == nil {
				t.Fatalf("iperf said nothing of what it sent:\n%s", out)
			}
			said, _ := strconv.ParseInt(m[1], 10, 64)
			wgWaitOne(t, ctx, recv)
			e := ended(t, recv)
			if len(e) != 1 {
				t.Fatalf("%d flows, want 1", len(e))
			}
			u := e[0].UDP
			if !e[0].ByFIN || u.Expected != said-1 || u.Received != u.Expected || e[0].Bytes != u.Expected*1000 {
				t.Errorf("received %d of %d (%d bytes, by FIN %v); iperf said it sent %d datagrams, so want all %d", u.Received, u.Expected, e[0].Bytes, e[0].ByFIN, said, said-1)
			}
			if u.JitterSamples == 0 {
				t.Error("no jitter samples from iperf 2's send times")
			}
		})
	}
}
