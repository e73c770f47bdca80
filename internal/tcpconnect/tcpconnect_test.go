package tcpconnect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// Every attempt to a listener on loopback connects, each handshake
// timed; the listener accepted as many connections as were counted.
func TestRunConnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan int)
	go func() {
		n := 0
		for {
			c, err := ln.Accept()
			if err != nil {
				accepted <- n
				return
			}
			n++
			c.Close()
		}
	}()
	cfg := Config{Count: 5, Interval: 10 * time.Millisecond, Timeout: 2 * time.Second, Family: "tcp"}
	r, err := Run(context.Background(), ln.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if n := <-accepted; r.Attempts != 5 || r.Connected != 5 || n != 5 || r.Connect.Count != 5 {
		t.Fatalf("result %+v, listener accepted %d: want 5 attempts, 5 connected", r, n)
	}
	if !(r.Connect.Min > 0 && r.Connect.Min <= r.Connect.P50 && r.Connect.P50 <= r.Connect.Max) {
		t.Fatalf("handshake times out of order: %+v", r.Connect)
	}
}

// A port nothing listens on refuses every attempt.
func TestRunRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, err := Run(context.Background(), addr, Config{Count: 3, Interval: 10 * time.Millisecond, Timeout: time.Second, Family: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 3 || r.Refused != 3 || r.Connected != 0 || r.Connect.Count != 0 {
		t.Fatalf("result %+v: want 3 refused", r)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Outcome
	}{
		{nil, Connected},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Refused},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), TimedOut},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, Failed},
		{errors.New("something else"), Failed},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		target string
		cfg    Config
		want   string
	}{
		{"127.0.0.1", DefaultConfig(), "HOST:PORT"},
		{"127.0.0.1:0", DefaultConfig(), "port"},
		{"127.0.0.1:99999", DefaultConfig(), "port"},
		{"127.0.0.1:80", Config{Count: 0, Interval: time.Second, Timeout: time.Second, Family: "tcp"}, "--count"},
		{"127.0.0.1:80", Config{Count: 1, Interval: time.Millisecond, Timeout: time.Second, Family: "tcp"}, "--interval"},
		{"127.0.0.1:80", Config{Count: 1, Interval: time.Second, Timeout: 0, Family: "tcp"}, "--timeout"},
	} {
		if _, err := Run(context.Background(), c.target, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %+v: %v, want one line naming %s", c.target, c.cfg, err, c.want)
		}
	}
}

// On Linux the kernel times every loopback handshake (no SYN is lost
// there), and its time is within the dial's.
func TestRunKernelTimes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TCP_INFO's handshake sample is Linux's")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r, err := Run(context.Background(), ln.Addr().String(), Config{Count: 3, Interval: 10 * time.Millisecond, Timeout: 2 * time.Second, Family: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Connected != 3 || r.KernelTimed != 3 || r.UserSpace.Count != 3 {
		t.Fatalf("connected %d, kernel timed %d, user-space times %d: want 3 each", r.Connected, r.KernelTimed, r.UserSpace.Count)
	}
	if r.Connect.Min > r.UserSpace.Min || r.Connect.Max > r.UserSpace.Max {
		t.Fatalf("kernel's handshake %+v beyond the dial's %+v", r.Connect, r.UserSpace)
	}
}

// KernelHandshake takes min_rtt, and nothing from a connection whose SYN
// was retransmitted or that has no sample.
func TestKernelHandshake(t *testing.T) {
	for _, c := range []struct {
		info *tcpinfo.Info
		want time.Duration
	}{
		{&tcpinfo.Info{MinRTTus: 19_400, RTTus: 19_400}, 19_400 * time.Microsecond},
		{&tcpinfo.Info{MinRTTus: 19_400, TotalRetrans: 1}, 0},
		{&tcpinfo.Info{MinRTTus: ^uint32(0)}, 0},
		{&tcpinfo.Info{}, 0},
		{nil, 0},
	} {
		if got := KernelHandshake(c.info); got != c.want {
			t.Errorf("KernelHandshake(%+v) = %v, want %v", c.info, got, c.want)
		}
	}
}

// The lab's 19 ms path beside a busy host: the kernel's handshake times
// are the path's, the dials' are up to 225 ms, and the client is named for
// the two it delayed; the figures without them are the path's.
func TestSummarizeHostDelay(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	times := []timing{
		{user: ms(19.6), kernel: ms(19.2)},
		{user: ms(19.9), kernel: ms(19.3)},
		{user: ms(224.9), kernel: ms(19.4)},
		{user: ms(60), kernel: ms(19.1)},
		{user: ms(21), kernel: 0}, // a retransmitted SYN: the dial's time
	}
	hs, user, kernel, d := summarize(times)
	if kernel != 4 || hs.Count != 5 || user.Count != 5 {
		t.Fatalf("kernel timed %d, counts %d and %d: want 4, 5, 5", kernel, hs.Count, user.Count)
	}
	if hs.Max > 21.1e3 || hs.Min < 19.0e3 {
		t.Fatalf("handshake times %+v: want the kernel's 19.1-19.4 ms and the dial's 21 ms", hs)
	}
	if user.Max < 224e3 {
		t.Fatalf("user-space max %.1f µs: want the dial's 224.9 ms kept", user.Max)
	}
	if d == nil {
		t.Fatal("no host delay flagged")
	}
	// The threshold is stats.HostDelayed of 19.1 ms: its 1 ms cap.
	// The dial's least cost, 0.4 ms, is no delay: shares 0, 0.2, 205.1
	// and 40.5 ms.
	if d.Host != result.RoleClient || d.Attempts != 2 || d.ThresholdUs != 1000 || d.DialCostUs < 399 || d.DialCostUs > 401 || d.ShareUs < 205e3 || d.ShareUs > 205.2e3 {
		t.Fatalf("host delay %+v: want the client, 2 attempts, up to 205.1 ms past a 0.4 ms dial cost, over 1 ms", d)
	}
	if d.WithoutUs == nil || *d.WithoutUs > 21.1e3 || d.UserMaxUs != user.Max {
		t.Fatalf("host delay %+v: want without them max 21 ms, with them the user-space max", d)
	}
	var b strings.Builder
	if err := WriteText(&b, Result{Target: "b:5201", Addr: "10.77.2.2:5201", Attempts: 5, Connected: 5, Connect: hs, UserSpace: user, KernelTimed: kernel, HostDelay: d}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the kernel's SYN to SYN-ACK, 4 of 5", "connect ms (the dial", "HOST DELAY: connect max 224.9", "holds 2 attempts the client host delayed, by up to 205.1", "less the dial's least cost 0.400 ms", "over 1.000 ms is the host's, not the path's", "without host-delayed attempts max 21.0"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// Dials no host delayed beyond scheduling, and kernel figures larger than
// the dial's (not this handshake's), flag nothing.
func TestSummarizeQuiet(t *testing.T) {
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	times := []timing{
		{user: us(230), kernel: us(30)}, // the dial's cost, 200 µs
		{user: us(320), kernel: us(40)}, // 80 µs past it: under the 100 µs floor
		{user: us(90), kernel: us(4000)},
	}
	if _, _, _, d := summarize([]timing{{user: us(230), kernel: us(30)}, {user: us(420), kernel: us(40)}}); d == nil || d.Attempts != 1 {
		t.Fatalf("a dial 180 µs past its cost: flag %+v, want 1 attempt", d)
	}
	hs, _, kernel, d := summarize(times)
	if d != nil || kernel != 2 {
		t.Fatalf("host delay %+v, kernel timed %d: want none, 2", d, kernel)
	}
	if hs.Max < 89 || hs.Max > 91 {
		t.Fatalf("handshake max %.0f µs: want the dial's 90 where the kernel's 4 ms can't be", hs.Max)
	}
	if _, _, k, d := summarize(nil); k != 0 || d != nil {
		t.Fatalf("no times: kernel %d, flag %+v", k, d)
	}
}
