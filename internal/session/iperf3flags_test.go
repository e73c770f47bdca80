package session_test

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

// startServer runs a wireperf server on loopback for the test.
func startServer(t *testing.T) int {
	t.Helper()
	return loopserver.Start(t, func(c *server.Config) { c.HandshakeTimeout = 2 * time.Second }).Addr().Port
}

func runClient(t *testing.T, port int, s spec.Spec, mod func(*session.ClientConfig)) (*result.Result, error) {
	t.Helper()
	cfg := session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s,
	}}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return session.RunClient(ctx, cfg)
}

// -k: both ends stop after the blocks, each a block of -l.
func TestBlockCount(t *testing.T) {
	port := startServer(t)
	const blocks, length = 64, 64 << 10
	s := spec.Default()
	s.Duration, s.Interval, s.Length, s.Blocks, s.Bytes = 0, 0, length, blocks, blocks*length
	res, err := runClient(t, port, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Directions() {
		if d.Sent.Bytes != blocks*length || d.Received.Bytes != blocks*length {
			t.Errorf("%s sent %d and the peer received %d, want %d blocks of %d", d.SenderRole, d.Sent.Bytes, d.Received.Bytes, blocks, length)
		}
	}
}

// --fq-rate caps a TCP sender: the kernel paces it, so a test moves
// about the rate, not loopback's gigabits.
func TestFQRatePacesTCP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_MAX_PACING_RATE is Linux's")
	}
	port := startServer(t)
	const rate = 40e6
	s := spec.Default()
	s.Duration, s.Interval, s.Length, s.FQRate = time.Second, 0, 128<<10, rate
	res, err := runClient(t, port, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Directions()[0]
	if bps := float64(d.Received.Bytes) * 8 / s.Duration.Seconds(); bps > 2*rate || bps < rate/20 { // the low bound only says it ran
		t.Errorf("received %.0f bit/s with --fq-rate %.0f", bps, rate)
	}
}

// --fq-rate on UDP without the fq qdisc is refused in one line naming
// the interface and its qdisc: the kernel would not pace it.
func TestFQRateUDPNeedsFQ(t *testing.T) {
	q, err := hostmon.ReadRootQdisc(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Skipf("cannot read loopback's qdisc: %v", err)
	}
	if q.Kind == "fq" {
		t.Skip("loopback has the fq qdisc here")
	}
	port := startServer(t)
	for _, reverse := range []bool{false, true} { // the client's senders, then the server's
		s := spec.Default()
		s.Protocol, s.Length, s.Rate, s.FQRate, s.Duration, s.Reverse = spec.UDP, 1000, 1e6, 1e6, time.Second, reverse
		_, err = runClient(t, port, s, nil)
		if err == nil || !strings.Contains(err.Error(), "--fq-rate: the kernel paces UDP only under the fq qdisc, and lo's root qdisc is "+q.Kind) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("-R %v: err = %v, want one line refusing --fq-rate on lo's %s", reverse, err, q.Kind)
		}
	}
}

// --rcv-timeout: a receiving client that gets nothing for that long ends
// the test with an error. The server sends one datagram a second.
func TestRcvTimeout(t *testing.T) {
	port := startServer(t)
	s := spec.Default()
	s.Protocol, s.Length, s.PPS, s.Reverse, s.Duration = spec.UDP, 100, 1, true, 5*time.Second
	start := time.Now()
	res, err := runClient(t, port, s, func(c *session.ClientConfig) { c.RcvTimeout = 300 * time.Millisecond })
	if err == nil || !strings.Contains(err.Error(), "no data received for 300ms (--rcv-timeout)") {
		t.Fatalf("err = %v, want the receive timeout", err)
	}
	if res == nil || res.Error != err.Error() {
		t.Errorf("the result does not carry the error: %+v", res)
	}
	if took := time.Since(start); took >= s.Duration {
		t.Errorf("the test took %v: the timeout did not end it", took)
	}
}

// --cntl-ka and -X shape the control connection.
func TestControlKeepAliveAndDevice(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_BINDTODEVICE is Linux's")
	}
	port := startServer(t)
	s := spec.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctl, err := control.Connect(ctx, control.ClientConfig{
		Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s, BindDevice: "lo",
		KeepAlive: &net.KeepAliveConfig{Enable: true, Idle: 31 * time.Second, Interval: 7 * time.Second, Count: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	checkControlSocket(t, ctl.TCP(), 31, 7, 4, "lo")
}

// -F over our protocol: the file's bytes reach the server in full (the
// test ends on its size), and what the client receives lands in its file.
func TestFile(t *testing.T) {
	port := startServer(t)
	const size = 1<<20 + 777
	src := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(src, bytes.Repeat([]byte("wireperf"), size/8+1)[:size], 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := spec.Default()
	s.Duration, s.Interval, s.Length, s.Bytes = 0, 0, 64<<10, size
	res, err := runClient(t, port, s, func(c *session.ClientConfig) { c.File = f })
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Directions()[0]; d.Sent.Bytes != size || d.Received.Bytes != size {
		t.Errorf("sent %d, received %d; want the file's %d", d.Sent.Bytes, d.Received.Bytes, size)
	}

	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s.Reverse = true
	res, err = runClient(t, port, s, func(c *session.ClientConfig) { c.File = out })
	if err != nil {
		t.Fatal(err)
	}
	fi, err := out.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Directions()[0]; fi.Size() != size || d.Received.Bytes != size {
		t.Errorf("received %d, wrote %d; want %d", d.Received.Bytes, fi.Size(), size)
	}
}
