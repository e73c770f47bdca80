package ping

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

// The tally, on a clock of the test's own: RTTs of first replies only,
// a duplicate counted, a stray reply ignored, loss from what is left,
// and each change of TTL.
func TestTally(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tl := newTally(4)
	for i := range 4 {
		tl.request(uint16(i), t0.Add(time.Duration(i)*time.Second))
	}
	tl.reply(0, t0.Add(10*time.Millisecond), 64)
	tl.reply(0, t0.Add(12*time.Millisecond), 64) // a duplicate
	tl.reply(9, t0.Add(13*time.Millisecond), 64) // never sent
	tl.reply(1, t0.Add(time.Second+20*time.Millisecond), 63)
	if all := tl.reply(3, t0.Add(3*time.Second+30*time.Millisecond), 64); all {
		t.Fatal("every reply in with request 2 unanswered")
	}
	var r Result
	tl.fill(&r)
	if r.Sent != 4 || r.Received != 3 || r.Duplicates != 1 || r.LossPercent != 25 {
		t.Fatalf("counts %+v: want 4 sent, 3 received, 1 duplicate, 25%% loss", r)
	}
	if r.TTL != 64 || r.TTLChanges != 2 {
		t.Fatalf("TTL %d, %d changes: want 64 and 2 (64→63→64)", r.TTL, r.TTLChanges)
	}
	// µs, to the histogram's 3 significant digits.
	if r.RTT.Count != 3 || r.RTT.Min < 9990 || r.RTT.Min > 10010 || r.RTT.Max < 29970 || r.RTT.Max > 30030 {
		t.Fatalf("RTTs %+v: want 3, from 10 ms to 30 ms", r.RTT)
	}
	tl.reply(2, t0.Add(2*time.Second+time.Millisecond), 64)
	if !tl.reply(2, t0.Add(2*time.Second+2*time.Millisecond), 64) {
		t.Fatal("every request answered, and the tally doesn't say so")
	}
}

func TestParseEchoReply(t *testing.T) {
	b, err := (&icmp.Message{Type: ipv4.ICMPTypeEchoReply, Body: &icmp.Echo{ID: 7, Seq: 300, Data: []byte("x")}}).Marshal(nil)
	if err != nil {
		t.Fatal(err)
	}
	if seq, id, ok := ParseEchoReply(1, b); !ok || seq != 300 || id != 7 {
		t.Fatalf("read %d %d %v", seq, id, ok)
	}
	req, _ := (&icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: 7, Seq: 1}}).Marshal(nil)
	for _, bad := range [][]byte{nil, {0}, req, b[:3]} {
		if _, _, ok := ParseEchoReply(1, bad); ok {
			t.Errorf("%x read as an echo reply", bad)
		}
	}
}

// FuzzParseEchoReply: any bytes, no panic.
func FuzzParseEchoReply(f *testing.F) {
	b, _ := (&icmp.Message{Type: ipv4.ICMPTypeEchoReply, Body: &icmp.Echo{ID: 7, Seq: 300}}).Marshal(nil)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseEchoReply(1, b)
		ParseEchoReply(58, b)
	})
}

// groupAdmitted says whether this namespace's ping_group_range admits
// the process's group.
func groupAdmitted(t *testing.T) bool {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
	if err != nil {
		t.Skipf("no ping_group_range: %v", err)
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		t.Fatal(err)
	}
	g := os.Getegid()
	return lo <= g && g <= hi
}

// Loopback answers every request, through a raw socket (root) and
// through a ping socket where the range admits this group; where it
// doesn't, the error is one line that names the sysctl.
func TestRunLoopback(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ping sockets as Linux has them")
	}
	cfg := Config{Count: 3, Interval: 10 * time.Millisecond, Size: 100, Timeout: 2 * time.Second, Family: "ip"}
	for _, raw := range []bool{false, true} {
		for _, addr := range []string{"127.0.0.1", "::1"} {
			cfg.Raw = raw
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			r, err := Run(ctx, addr, cfg)
			cancel()
			switch {
			case raw && os.Geteuid() != 0:
				continue
			case !raw && !groupAdmitted(t):
				if err == nil || !strings.Contains(err.Error(), "net.ipv4.ping_group_range") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ping socket refused: %v; want one line naming net.ipv4.ping_group_range", err)
				}
				continue
			case err != nil && strings.Contains(err.Error(), "address"):
				t.Logf("%s: %v", addr, err)
				continue
			case err != nil:
				t.Fatalf("raw %v %s: %v", raw, addr, err)
			}
			if r.Sent != 3 || r.Received != 3 || r.Duplicates != 0 || r.LossPercent != 0 || r.RTT.Count != 3 || r.TTL == 0 || r.TTLChanges != 0 {
				t.Fatalf("raw %v %s: %+v: want 3 answered, a TTL, no change", raw, addr, r)
			}
		}
	}
}
