package serverflags

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
)

// iperf3Says is iperf3's own text for IETOTALRATE, which an iperf3 client
// prints for every byte cap of the server.
const iperf3Says = "total required bandwidth is larger than server limit"

// runIperf3 runs the iperf3 client against a wireperf server on loopback
// and returns what it printed and whether it failed. Each test is bounded
// in time by -t and in the process's life by a timeout.
func runIperf3(t *testing.T, bin string, port int, args ...string) (out string, failed bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)
	b, err := exec.CommandContext(ctx, bin, argv...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("iperf3 %v still ran after 30 s:\n%s", argv, b)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("iperf3 %v: %v", argv, err)
	}
	return string(b), err != nil
}

// --server-bitrate-limit against iperf3 clients, as an iperf3 3.21 server
// does it: a test whose -b × streams asks for more is refused with
// IETOTALRATE before it starts, one that sends without a rate is ended
// with IETOTALRATE once a window has passed, and one under the limit runs
// whole. IPERF3 names the iperf3 to run (Debian's 3.12 when unset).
func TestServerBitrateLimitIperf3(t *testing.T) {
	bin := iperf3bin.Need(t)
	port, _ := serveOnce(t, "--server-bitrate-limit", "10m/0.5")
	if out, failed := runIperf3(t, bin, port, "-t", "2", "-b", "20M"); !failed || !strings.Contains(out, iperf3Says) {
		t.Errorf("iperf3 -b 20M against a 10 Mbit/s limit: failed %v, want IETOTALRATE:\n%s", failed, out)
	}
	if out, failed := runIperf3(t, bin, port, "-t", "3", "-P", "2"); !failed || !strings.Contains(out, iperf3Says) {
		t.Errorf("iperf3 -P 2 without a rate against a 10 Mbit/s limit: failed %v, want IETOTALRATE:\n%s", failed, out)
	}
	if out, failed := runIperf3(t, bin, port, "-t", "2", "-R", "-b", "2M", "-i", "0"); failed {
		t.Errorf("iperf3 -R -b 2M under a 10 Mbit/s limit failed:\n%s", out)
	}
}

// --client-daily-bytes against iperf3 and wireperf clients from the same
// address: the test that passes the budget is ended, the next one is
// refused, with iperf3's code for iperf3 and the one-line reason for ours.
func TestClientDailyBytes(t *testing.T) {
	bin := iperf3bin.Need(t)
	port, _ := serveOnce(t, "--client-daily-bytes", "20M")
	// 20 Mbit/s for 10 s would be 25 MB: the budget ends it after 8 s
	// at most, and iperf3 reports the server's error.
	out, failed := runIperf3(t, bin, port, "-t", "10", "-b", "20M", "-i", "0")
	if !failed || !strings.Contains(out, iperf3Says) {
		t.Errorf("iperf3 moving 25 MB against a 20 MB budget: failed %v, want IETOTALRATE:\n%s", failed, out)
	}
	if out, failed := runIperf3(t, bin, port, "-t", "1", "-i", "0"); !failed || !strings.Contains(out, iperf3Says) {
		t.Errorf("iperf3 after the budget is used: failed %v, want IETOTALRATE:\n%s", failed, out)
	}
	s := spec.Default()
	s.Duration, s.Interval = time.Second, 0
	_, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s,
	}})
	if !errors.Is(err, control.ErrRefused) || !strings.Contains(err.Error(), "--client-daily-bytes") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a wireperf client after the budget is used: %v, want a one-line refusal naming the budget", err)
	}
	t.Logf("the wireperf client is told: %v", err)
}

// --server-total-bitrate-limit: an iperf3 client that asks for more than
// the total is refused before it starts; a wireperf test without a rate
// alone on the server is ended as the newest once the total passes the
// limit for a window.
func TestServerTotalBitrateLimit(t *testing.T) {
	bin := iperf3bin.Need(t)
	port, _ := serveOnce(t, "--server-total-bitrate-limit", "50m/0.5")
	s := spec.Default()
	s.Duration, s.Interval = 3*time.Second, 0
	_, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s,
	}})
	if err == nil || !strings.Contains(err.Error(), "--server-total-bitrate-limit") {
		t.Errorf("an unlimited TCP test against a 50 Mbit/s total: %v, want it ended", err)
	}
	if out, failed := runIperf3(t, bin, port, "-t", "2", "-b", "10M", "-i", "0"); failed {
		t.Errorf("iperf3 -b 10M alone under a 50 Mbit/s total failed:\n%s", out)
	}
}

// --server-max-duration against an iperf3 client: refused before it
// starts with iperf3 3.21's IEMAXSERVERTESTDURATIONEXCEEDED (code 37,
// which iperf3 before 3.20 prints as its number).
func TestServerMaxDurationIperf3(t *testing.T) {
	bin := iperf3bin.Need(t)
	port, _ := serveOnce(t, "--server-max-duration", "1")
	out, failed := runIperf3(t, bin, port, "-t", "3")
	if !failed || !(strings.Contains(out, "exceeds the server's maximum permitted limit") || strings.Contains(out, "int_errno=37")) {
		t.Errorf("iperf3 -t 3 against --server-max-duration 1: failed %v, want IEMAXSERVERTESTDURATIONEXCEEDED:\n%s", failed, out)
	}
	t.Logf("iperf3 prints: %s", strings.TrimSpace(out))
}
