package rrcontrol_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startServer runs a wireperf server on loopback for the test. When the
// test ends it stops the server and checks that nothing the test started
// is still running.
func startServer(t *testing.T) *server.Server { return startServerWith(t, func(*server.Config) {}) }

// startServerWith is startServer with the configuration changed first.
func startServerWith(t *testing.T, mutate func(*server.Config)) *server.Server {
	t.Helper()
	before := goleak.IgnoreCurrent()
	// Cleanups run last first: the server stops before the check.
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	return loopserver.Start(t, mutate)
}

func rrSpec(mode string, sizes ...int) spec.Spec {
	return spec.Spec{Protocol: spec.RR, Streams: 1, RRMode: mode, RRSizes: spec.FormatRRSizes(sizes...), RRCount: 300}
}

func runRR(t *testing.T, srv *server.Server, s spec.Spec) *result.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rrcontrol.Run(ctx, rrcontrol.Config{ClientConfig: control.ClientConfig{Host: "127.0.0.1", Port: srv.Addr().Port, Spec: s, Logger: quiet()}})
	if err != nil {
		t.Fatalf("%s: %v", s.RRMode, err)
	}
	return res
}

func TestRRModesOverTheNativeProtocol(t *testing.T) {
	srv := startServer(t)
	for _, mode := range []string{spec.RRUDP, spec.RRTCP, spec.RRCRR} {
		t.Run(mode, func(t *testing.T) {
			s := rrSpec(mode, 64, 1024)
			s.RRResponse = 200
			res := runRR(t, srv, s)
			lr, sr := res.Local.RR, res.Remote.RR
			if lr == nil || sr == nil || len(lr.Points) != 2 {
				t.Fatalf("reports: local %+v remote %+v", lr, sr)
			}
			// Both ends name the interface the test used (lo) and its qdisc.
			for _, l := range []*result.Limits{res.Local.Limits, res.Remote.Limits} {
				if runtime.GOOS == "linux" && (l == nil || l.Interface != "lo" || l.Qdisc == "") {
					t.Errorf("limits %+v: want lo and its qdisc", l)
				}
			}
			for i, p := range lr.Points {
				if p.RequestSize != s.RRSizeList()[i] || p.ResponseSize != 200 || p.Completed != 300 || p.Lost != 0 {
					t.Errorf("point %d: %+v", i, p)
				}
				if p.RTT.P50 <= 0 || p.NetworkRTT.P50 > p.RTT.P50 || p.ServerTime.Count != 300 || p.TransactionsPerSecond <= 0 {
					t.Errorf("point %d figures: rtt %+v net %+v server %+v tps %v", i, p.RTT, p.NetworkRTT, p.ServerTime, p.TransactionsPerSecond)
				}
				// Same host, same clock: the offset estimate must hold
				// zero, and the one-way delays lie within the RTT.
				if p.ForwardOWD == nil || p.ForwardOWD.P50 > p.RTT.P50 || p.BackwardOWD.P50 > p.RTT.P50 {
					t.Errorf("point %d one-way delays: %+v %+v (rtt %v)", i, p.ForwardOWD, p.BackwardOWD, p.RTT.P50)
				}
			}
			if c := lr.Clock; c == nil || c.OffsetUs-c.ErrorBoundUs > 1 || c.OffsetUs+c.ErrorBoundUs < -1 {
				t.Errorf("clock estimate %+v does not contain 0", c)
			}
			// The server counts the warm-up requests too.
			if sr.Served < 600 || sr.ServerTime == nil {
				t.Errorf("server: %+v", sr)
			}
			if mode == spec.RRCRR && sr.Connections < 600 {
				t.Errorf("crr: server accepted %d connections, want one per transaction", sr.Connections)
			}
			t.Logf("%s: p50 %.1f µs (network %.1f, server %.1f), %.0f/s; clock %+v", mode,
				lr.Points[0].RTT.P50, lr.Points[0].NetworkRTT.P50, lr.Points[0].ServerTime.P50, lr.Points[0].TransactionsPerSecond, *lr.Clock)
		})
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.TestsFinished != 3 || st.ForeignData != 0 {
		t.Errorf("server stats %+v", st)
	}
}

func waitIdle(t *testing.T, srv *server.Server) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Stats().Running > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // bounded poll: the server's running tests, at most 5 s
	}
}

// A crr test by time: the server takes new connections for as long as the
// test runs, thousands of them.
func TestCRRByTime(t *testing.T) {
	srv := startServer(t)
	s := rrSpec(spec.RRCRR, 64)
	s.RRCount, s.Duration = 0, time.Second
	res := runRR(t, srv, s)
	p := res.Local.RR.Points[0]
	// A count, not a speed: how many fit in 1 s depends on the machine (and -race).
	if p.Completed < 10 || p.Errors != 0 || res.Remote.RR.Connections < p.Completed {
		t.Errorf("crr: %d completed, %d errors, server saw %d connections", p.Completed, p.Errors, res.Remote.RR.Connections)
	}
	t.Logf("crr for 1 s: %d transactions, p50 %.1f µs", p.Completed, p.RTT.P50)
}

func TestRRCancelEndsCleanly(t *testing.T) {
	srv := startServer(t)
	s := rrSpec(spec.RRUDP, 64)
	s.RRCount, s.Duration = 0, time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := rrcontrol.Run(ctx, rrcontrol.Config{ClientConfig: control.ClientConfig{Host: "127.0.0.1", Port: srv.Addr().Port, Spec: s, Logger: quiet()}})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cancel took %v", d)
	}
	if res.Local.RR.Points[0].Completed == 0 || res.Remote.RR == nil {
		t.Errorf("cancelled test lost its figures: %+v", res.Local.RR)
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.Running != 0 {
		t.Errorf("server still runs %d tests", st.Running)
	}
}

func TestRRRefusesBadSpec(t *testing.T) {
	srv := startServer(t)
	s := rrSpec(spec.RRUDP, 20)
	_, err := rrcontrol.Run(context.Background(), rrcontrol.Config{ClientConfig: control.ClientConfig{Host: "127.0.0.1", Port: srv.Addr().Port, Spec: s, Logger: quiet()}})
	if err == nil {
		t.Fatal("a 20-byte request was accepted")
	}
}

// A test whose socket options the server cannot set is refused before it
// starts, with the option in the reason, as a TCP test is. The client
// here asks for a congestion control no kernel has and sets nothing
// itself, as a client whose kernel has it would.
func TestRRRefusesATestWhoseSocketOptionsFail(t *testing.T) {
	srv := startServer(t)
	for _, mode := range []string{spec.RRTCP, spec.RRCRR} {
		t.Run(mode, func(t *testing.T) {
			s := rrSpec(mode, 64)
			s.Congestion = "nosuchcc"
			ctl := connectRaw(t, srv.Addr().Port, s)
			if mode == spec.RRTCP {
				tok, err := proto.ParseToken(ctl.Accept().Token)
				if err != nil {
					t.Fatal(err)
				}
				c, err := ctl.Dial(context.Background(), "tcp", sockopt.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Write(proto.DataHello{Token: tok, StreamID: 1}.Marshal()); err != nil {
					t.Fatal(err)
				}
			}
			err := ctl.ReadReady(&proto.StreamsReady{})
			if err == nil || !strings.Contains(err.Error(), "TCP_CONGESTION") || !strings.Contains(err.Error(), "nosuchcc") {
				t.Fatalf("the server took a test whose congestion control it cannot set: %v", err)
			}
		})
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.Running != 0 || st.TestsAccepted != 0 {
		t.Errorf("server stats %+v: the refused tests ran or hold their slots", st)
	}
}

// TestRROutlivesTheSetUpDeadline: the control connection's set-up
// deadline bounds the set-up only. A test longer than it (here 1.5 s
// against a 500 ms connect timeout; by default 10 s, which any rr --load
// over a long path passes) runs to its end, not to "control connection
// silent".
func TestRROutlivesTheSetUpDeadline(t *testing.T) {
	srv := startServer(t)
	s := rrSpec(spec.RRUDP, 64)
	s.RRCount, s.Duration = 0, 1500*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rrcontrol.Run(ctx, rrcontrol.Config{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: srv.Addr().Port, Spec: s, Logger: quiet(), ConnectTimeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatalf("a 1.5 s test with a 0.5 s connect timeout: %v", err)
	}
	if p := res.Local.RR.Points[0]; p.Seconds < 1.4 {
		t.Errorf("the test ran %.2f s of 1.5", p.Seconds)
	}
}

// TestKeepAlivePeriodScalesWithTheRTT: 5 s on a short path, 20 round
// trips on a long one.
func TestKeepAlivePeriodScalesWithTheRTT(t *testing.T) {
	if got := rrcontrol.KeepAlivePeriod(time.Millisecond); got != 5*time.Second {
		t.Errorf("1 ms: %v", got)
	}
	if got := rrcontrol.KeepAlivePeriod(600 * time.Millisecond); got != 12*time.Second {
		t.Errorf("600 ms: %v", got)
	}
}
