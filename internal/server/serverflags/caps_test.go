package serverflags

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// --server-max-duration, iperf3's name, sets the server's --max-duration:
// on loopback a client asking for a longer test is refused with the
// limit, and one under it runs.
func TestServerMaxDuration(t *testing.T) {
	f := parse(t, "--server-max-duration", "1", "-B", "127.0.0.1", "-p", "0", "-i", "0")
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if f.Config.Limits.MaxDuration != time.Second {
		t.Fatalf("--server-max-duration 1: limit %v, want 1s", f.Config.Limits.MaxDuration)
	}
	srv := f.Server(&syncbuf.Buffer{}, slog.New(slog.DiscardHandler))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		<-served
	}()
	run := func(d time.Duration) error {
		s := spec.Default()
		s.Duration, s.Interval = d, 0
		_, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: "127.0.0.1", Port: srv.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s,
		}})
		return err
	}
	if err := run(3 * time.Second); !errors.Is(err, control.ErrRefused) || !strings.Contains(err.Error(), "its limit is 1s") {
		t.Errorf("a 3 s test: err %v, want a refusal naming the 1 s limit", err)
	}
	if err := run(300 * time.Millisecond); err != nil {
		t.Errorf("a 300 ms test under the limit: %v", err)
	}
}

// serveOnce starts the server the flags describe on loopback; served
// gives Serve's return.
func serveOnce(t *testing.T, args ...string) (port int, served chan error) {
	t.Helper()
	f := parse(t, append([]string{"-B", "127.0.0.1", "-p", "0", "-i", "0"}, args...)...)
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	srv := f.Server(&syncbuf.Buffer{}, slog.New(slog.DiscardHandler))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served = make(chan error, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		served <- srv.Serve(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return srv.Addr().Port, served
}

// waitServed fails the test unless Serve returns nil within limit (a bound
// on a hang, not a measure of time).
func waitServed(t *testing.T, served chan error, limit time.Duration) {
	t.Helper()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(limit):
		t.Fatalf("the server still serves after %v", limit)
	}
}

// -1 --idle-timeout, as iperf3's: a one-test server that no client
// reaches stops by itself; one whose test runs longer than the timeout
// serves it whole and then stops.
func TestIdleTimeout(t *testing.T) {
	t.Run("no client", func(t *testing.T) {
		_, served := serveOnce(t, "-1", "--idle-timeout", "0.2")
		waitServed(t, served, 10*time.Second)
	})
	t.Run("a test longer than the timeout", func(t *testing.T) {
		// A shutdown would abort the test at once: the test runs whole
		// only if its connections hold the idle clock.
		port, served := serveOnce(t, "-1", "--idle-timeout", "0.2", "--shutdown-grace", "0.001")
		s := spec.Default()
		s.Duration, s.Interval = 700*time.Millisecond, 0
		res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s,
		}})
		if err != nil {
			t.Fatalf("a 700 ms test on a server with a 200 ms idle timeout: %v", err)
		}
		if res.Error != "" || len(res.Local.Streams) != 1 || res.Local.Streams[0].Bytes == 0 || res.Local.Streams[0].End < 0.6 {
			t.Errorf("the test did not run whole: error %q, streams %+v", res.Error, res.Local.Streams)
		}
		waitServed(t, served, 10*time.Second)
	})
}

// --server-bitrate-limit RATE/SECONDS, as iperf3's: on loopback a TCP test
// without a rate, far over 10 Mbit/s, is ended with iperf3's reason once a
// window has passed; a UDP test at 2 Mbit/s runs whole.
func TestServerBitrateLimit(t *testing.T) {
	port, _ := serveOnce(t, "--server-bitrate-limit", "10m/0.3")
	run := func(s spec.Spec) (*result.Result, error) {
		return session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s,
		}})
	}
	over := spec.Default()
	over.Duration, over.Interval, over.Streams = 3*time.Second, 0, 2
	_, err := run(over)
	if err == nil || !strings.Contains(err.Error(), "total required bandwidth is larger than server limit") ||
		!strings.Contains(err.Error(), "--server-bitrate-limit") {
		t.Errorf("an unlimited TCP test against a 10 Mbit/s limit: err %v, want iperf3's reason", err)
	}
	t.Logf("the client's error: %v", err)
	under := spec.Default()
	under.Protocol, under.Rate, under.Length = spec.UDP, 2e6, 1200
	under.Duration, under.Interval = time.Second, 0
	res, err := run(under)
	if err != nil || res.Error != "" {
		t.Fatalf("a 2 Mbit/s UDP test under a 10 Mbit/s limit: %v %v", err, res)
	}
}
