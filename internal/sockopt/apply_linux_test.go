package sockopt

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// families are the loopbacks every family-sensitive test runs on.
var families = []struct{ network, addr string }{
	{"tcp4", "127.0.0.1:0"},
	{"tcp6", "[::1]:0"},
}

func readSysctlInt(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("cannot read %s: %v", path, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

func allowedCongestion(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(allowedPath)
	if err != nil {
		t.Skipf("cannot read %s: %v", allowedPath, err)
	}
	return parseCongestionList(b)
}

func getInt(t *testing.T, rc syscall.RawConn, level, opt int) int {
	t.Helper()
	var v int
	err := control(rc, func(fd uintptr) error {
		var err error
		v, err = unix.GetsockoptInt(int(fd), level, opt)
		return err
	})
	if err != nil {
		t.Fatalf("getsockopt(%d, %d): %v", level, opt, err)
	}
	return v
}

func TestBuffersGranted(t *testing.T) {
	const req = 65536
	// Linux caps the request at {w,r}mem_max and then doubles it for bookkeeping.
	wantSnd := 2 * min(req, readSysctlInt(t, "/proc/sys/net/core/wmem_max"))
	wantRcv := 2 * min(req, readSysctlInt(t, "/proc/sys/net/core/rmem_max"))
	for _, f := range families {
		t.Run(f.network, func(t *testing.T) {
			c, _ := pair(t, f.network, f.addr, nil)
			rc := rawConn(t, c)
			if err := Apply(rc, Options{SndBuf: req, RcvBuf: req}); err != nil {
				t.Fatal(err)
			}
			got, err := Read(rc)
			if err != nil {
				t.Fatal(err)
			}
			if got.SndBuf != wantSnd || got.RcvBuf != wantRcv {
				t.Errorf("granted snd=%d rcv=%d, want %d %d", got.SndBuf, got.RcvBuf, wantSnd, wantRcv)
			}
		})
	}
}

func TestNoDelay(t *testing.T) {
	c, _ := pair(t, "tcp4", "127.0.0.1:0", nil)
	// Go turns TCP_NODELAY on by default; turn it off so Apply has work to do.
	if err := c.SetNoDelay(false); err != nil {
		t.Fatal(err)
	}
	rc := rawConn(t, c)
	if v := getInt(t, rc, unix.IPPROTO_TCP, unix.TCP_NODELAY); v != 0 {
		t.Fatalf("TCP_NODELAY = %d before Apply, want 0", v)
	}
	if err := Apply(rc, Options{NoDelay: true}); err != nil {
		t.Fatal(err)
	}
	if v := getInt(t, rc, unix.IPPROTO_TCP, unix.TCP_NODELAY); v == 0 {
		t.Error("TCP_NODELAY still 0 after Apply")
	}
}

func TestTOS(t *testing.T) {
	const tos = 0x20 // CS1; DSCP values keep the ECN bits clear
	for _, f := range families {
		t.Run(f.network, func(t *testing.T) {
			c, _ := pair(t, f.network, f.addr, nil)
			rc := rawConn(t, c)
			if err := Apply(rc, Options{TOS: tos}); err != nil {
				t.Fatal(err)
			}
			level, opt := unix.IPPROTO_IP, unix.IP_TOS
			if f.network == "tcp6" {
				level, opt = unix.IPPROTO_IPV6, unix.IPV6_TCLASS
			}
			if v := getInt(t, rc, level, opt); v != tos {
				t.Errorf("traffic class = %#x, want %#x", v, tos)
			}
		})
	}
}

func TestCongestionRoundTrip(t *testing.T) {
	allowed := allowedCongestion(t)
	for _, cc := range []string{"reno", "cubic"} {
		t.Run(cc, func(t *testing.T) {
			if !slices.Contains(allowed, cc) {
				t.Skipf("%q is not in %s (%v)", cc, allowedPath, allowed)
			}
			c, _ := pair(t, "tcp4", "127.0.0.1:0", nil)
			rc := rawConn(t, c)
			if err := Apply(rc, Options{Congestion: cc}); err != nil {
				t.Fatal(err)
			}
			got, err := Read(rc)
			if err != nil {
				t.Fatal(err)
			}
			if got.Congestion != cc {
				t.Errorf("Congestion = %q, want %q", got.Congestion, cc)
			}
		})
	}
}

func TestUnknownCongestion(t *testing.T) {
	allowed := allowedCongestion(t)
	c, _ := pair(t, "tcp4", "127.0.0.1:0", nil)
	const name = "wireperf-nosuch"
	err := Apply(rawConn(t, c), Options{Congestion: name})
	if err == nil {
		t.Fatal("Apply accepted an unknown congestion algorithm")
	}
	msg := err.Error()
	if !strings.Contains(msg, `setting TCP_CONGESTION "`+name+`"`) {
		t.Errorf("error %q does not name TCP_CONGESTION and the request", msg)
	}
	if !errors.Is(err, unix.ENOENT) {
		t.Errorf("error %q does not wrap ENOENT", msg)
	}
	if len(allowed) > 0 && !strings.Contains(msg, "kernel allows: "+strings.Join(allowed, " ")) {
		t.Errorf("error %q does not list the allowed algorithms %v", msg, allowed)
	}
}

func TestMSSViaControl(t *testing.T) {
	const mss = 1000
	for _, f := range families {
		t.Run(f.network, func(t *testing.T) {
			c, _ := pair(t, f.network, f.addr, &net.Dialer{Control: Control(Options{MSS: mss})})
			got, err := Read(rawConn(t, c))
			if err != nil {
				t.Fatal(err)
			}
			if got.MSS <= 0 || got.MSS > mss {
				t.Errorf("MSS = %d, want 1..%d", got.MSS, mss)
			}
		})
	}
}

func TestMTULoopback(t *testing.T) {
	lo := readSysctlInt(t, "/sys/class/net/lo/mtu") // 65536 by default
	for _, f := range families {
		t.Run(f.network, func(t *testing.T) {
			want := lo
			if f.network == "tcp4" {
				// IPv4 caps a route's MTU at IP_MAX_MTU (65535, the largest
				// total length the header can carry); IPv6 reports lo's own.
				want = min(lo, 65535)
			}
			c, _ := pair(t, f.network, f.addr, nil)
			got, err := Read(rawConn(t, c))
			if err != nil {
				t.Fatal(err)
			}
			if got.MTU != want {
				t.Errorf("MTU = %d, want %d (lo mtu %d)", got.MTU, want, lo)
			}
			if got.Congestion == "" {
				t.Error("Congestion empty on a TCP socket")
			}
		})
	}
}

func TestMTUUnknownWhenUnconnected(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got, err := Read(rawConn(t, ln.(*net.TCPListener)))
	if err != nil {
		t.Fatal(err)
	}
	if got.MTU != 0 {
		t.Errorf("MTU on a listener = %d, want 0 (no route yet)", got.MTU)
	}
}

func TestApplyClosedConn(t *testing.T) {
	c, _ := pair(t, "tcp4", "127.0.0.1:0", nil)
	rc := rawConn(t, c)
	c.Close()
	if err := Apply(rc, Options{NoDelay: true}); err == nil {
		t.Error("Apply on a closed conn succeeded")
	}
	if _, err := Read(rc); err == nil {
		t.Error("Read on a closed conn succeeded")
	}
}

func FuzzParseCongestionList(f *testing.F) {
	f.Add([]byte("reno cubic bbr\n"))
	f.Add([]byte(""))
	f.Add([]byte(strings.Repeat("x ", 100)))
	f.Fuzz(func(t *testing.T, data []byte) {
		names := parseCongestionList(data)
		if len(names) > 64 {
			t.Fatalf("%d names, cap is 64", len(names))
		}
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, " \n\t") {
				t.Fatalf("bad name %q", n)
			}
		}
	})
}

// UserTimeout (--snd-timeout) reaches the socket as TCP_USER_TIMEOUT in
// milliseconds.
func TestApplyUserTimeout(t *testing.T) {
	for _, fam := range families {
		lc := net.ListenConfig{Control: Control(Options{UserTimeout: 1500 * time.Millisecond})}
		ln, err := lc.Listen(context.Background(), fam.network, fam.addr)
		if err != nil {
			t.Skipf("%s: %v", fam.network, err)
		}
		rc, err := ln.(*net.TCPListener).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got int
		var gerr error
		if err := rc.Control(func(fd uintptr) { got, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT) }); err != nil || gerr != nil {
			t.Fatal(err, gerr)
		}
		ln.Close()
		if got != 1500 {
			t.Errorf("%s: TCP_USER_TIMEOUT %d ms, want 1500", fam.network, got)
		}
	}
}
