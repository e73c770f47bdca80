package netsetup

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

// A -m data dial with an option this kernel may refuse on MPTCP sockets
// (TCP_USER_TIMEOUT, SO_MAX_PACING_RATE: Linux 6.18 refuses both) either
// gets an MPTCP connection or fails naming MPTCP; it never runs on plain
// TCP in silence, which is what Go's own retry would do.
func TestMPTCPDialNoSilentFallback(t *testing.T) {
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled in this kernel (net.mptcp.enabled)")
	}
	ln, err := Listen(t.Context(), "127.0.0.1:0", true)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	for name, o := range map[string]sockopt.Options{
		"none":          {},
		"--snd-timeout": {UserTimeout: 3 * time.Second},
		"--fq-rate":     {MaxPacingRate: 1e6},
		"-N":            {NoDelay: true},
	} {
		d, err := Client{Timeout: 5 * time.Second, MPTCP: true}.DataDialer("tcp4", 0, o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := d.DialContext(ctx, "tcp4", ln.Addr().String())
		cancel()
		if err != nil {
			if !strings.Contains(err.Error(), "on an MPTCP socket") {
				t.Errorf("%s: %v; a refusal should name MPTCP", name, err)
			}
			continue
		}
		raw, _ := c.(*net.TCPConn).SyscallConn()
		if m, err := tcpinfo.GetMPTCP(raw); err != nil || m.Fallback {
			t.Errorf("%s: the dial succeeded on plain TCP (%+v, %v)", name, m, err)
		}
		_ = c.Close()
	}
}
