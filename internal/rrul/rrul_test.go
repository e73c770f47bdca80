package rrul

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/rrload"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

// pacedFlows holds each loopback flow to rate: a run's bytes are bounded.
func pacedFlows(rate float64) spec.Spec {
	s := spec.Default()
	s.Rate = rate
	return s
}

func loopConfig(srv *server.Server) Config {
	return Config{
		Client: control.ClientConfig{Host: "127.0.0.1", Port: srv.Addr().Port, Logger: nil},
		Idle:   time.Second, Load: 2 * time.Second, After: time.Second,
		Flow: pacedFlows(20e6),
	}
}

// TestLoopbackRun: against a server with the default limits, every flow
// of every class carries bytes each way, its series lies inside the
// loaded phase, every probe reports its three phases, and the latency
// figures are the probes'.
func TestLoopbackRun(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) }) // after the server's own cleanup
	if def := server.DefaultLimits().MaxTestsPerClient; def < Tests {
		t.Fatalf("a run holds %d tests open; a default server admits %d from one client", Tests, def)
	}
	srv := loopserver.Start(t) // server.DefaultLimits
	cfg := loopConfig(srv)
	if runtime.GOOS == "linux" {
		// Reno is built into every Linux kernel and always allowed, and
		// is no host's default: the flows must run what was asked.
		cfg.Flow.Congestion = "reno"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Congestion != cfg.Flow.Congestion {
		t.Errorf("run's congestion control %q, asked %q", res.Congestion, cfg.Flow.Congestion)
	}
	if len(res.Flows) != 2*len(FlowClasses) || len(res.Probes) != len(ProbeClasses) {
		t.Fatalf("%d flows and %d probes, want %d and %d", len(res.Flows), len(res.Probes), 2*len(FlowClasses), len(ProbeClasses))
	}
	if res.LoadStartSeconds < cfg.Idle.Seconds() || res.LoadEndSeconds-res.LoadStartSeconds < cfg.Load.Seconds() {
		t.Errorf("load on the axis from %.3f to %.3f s, want from after %v for at least %v", res.LoadStartSeconds, res.LoadEndSeconds, cfg.Idle, cfg.Load)
	}
	var up, down float64
	for _, f := range res.Flows {
		if f.Bytes <= 0 || f.BitsPerSecond <= 0 || len(f.Series) < 5 || f.Error != "" {
			t.Errorf("%s %s: %d bytes, %.0f bit/s, %d steps, error %q", f.Class, f.Direction, f.Bytes, f.BitsPerSecond, len(f.Series), f.Error)
		}
		// Each sender's end reports its TCP_INFO where the kernel has one.
		if runtime.GOOS == "linux" && (f.SenderCwndBytes == 0 || f.SenderRTTms <= 0 || f.RwndLimited == nil) {
			t.Errorf("%s %s: no sender TCP_INFO: cwnd %d, RTT %.3f ms, rwnd share %v", f.Class, f.Direction, f.SenderCwndBytes, f.SenderRTTms, f.RwndLimited)
		}
		// Each sender names the algorithm its socket ran: the one asked.
		if runtime.GOOS == "linux" && f.Congestion != cfg.Flow.Congestion {
			t.Errorf("%s %s: congestion control %q, asked %q", f.Class, f.Direction, f.Congestion, cfg.Flow.Congestion)
		}
		// Paced at 20 Mbit/s: a flow's goodput cannot be far above it.
		if f.BitsPerSecond > 1.2*cfg.Flow.Rate {
			t.Errorf("%s %s: %.1f Mbit/s, paced at %.0f", f.Class, f.Direction, f.BitsPerSecond/1e6, cfg.Flow.Rate/1e6)
		}
		for _, p := range f.Series {
			if p.T < res.LoadStartSeconds-0.05 || p.T > res.LoadEndSeconds+0.05 {
				t.Errorf("%s %s: a step at %.3f s, outside the load (%.3f to %.3f s)", f.Class, f.Direction, p.T, res.LoadStartSeconds, res.LoadEndSeconds)
				break
			}
		}
		if f.Direction == "up" {
			up += f.BitsPerSecond
		} else {
			down += f.BitsPerSecond
		}
	}
	if up != res.UpBitsPerSecond || down != res.DownBitsPerSecond {
		t.Errorf("totals %.0f up, %.0f down; the flows add to %.0f and %.0f", res.UpBitsPerSecond, res.DownBitsPerSecond, up, down)
	}
	var completed [3]int64
	for _, p := range res.Probes {
		if len(p.Phases) != 3 || p.Error != "" || len(p.Series) == 0 {
			t.Fatalf("probe %s: %d phases, %d steps, error %q", p.Class, len(p.Phases), len(p.Series), p.Error)
		}
		for i, ph := range p.Phases {
			if ph.Label != phaseLabels[i] || ph.Completed == 0 {
				t.Errorf("probe %s phase %d: %q with %d transactions", p.Class, i, ph.Label, ph.Completed)
			}
			completed[i] += ph.Completed
		}
	}
	l := res.Latency
	for i, got := range []int64{l.Idle.Count, l.Loaded.Count, l.After.Count} {
		if got != completed[i] {
			t.Errorf("phase %s: latency over %d samples, the probes completed %d", phaseLabels[i], got, completed[i])
		}
	}
	if l.Increase.P50 != l.Loaded.P50-l.Idle.P50 || l.IdleHistogram == nil || l.LoadedHistogram == nil {
		t.Errorf("latency %+v", l)
	}
	if res.CPU.TotalPercent <= 0 {
		t.Errorf("own CPU %+v", res.CPU)
	}
}

// TestTooFewTestsAdmitted: a server that admits fewer tests from one
// client than a run holds open (4) is said so, and no load runs: at 2 a
// probe is refused, at 3 the flows' test.
func TestTooFewTestsAdmitted(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opts) }) // after the servers' own cleanup
	for limit, what := range map[int]string{2: "probe", 3: "the flows:"} {
		srv := loopserver.Start(t, func(c *server.Config) { c.Limits.MaxTestsPerClient = limit })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := Run(ctx, loopConfig(srv))
		cancel()
		if err == nil || res != nil || !strings.Contains(err.Error(), "--max-tests-per-client") ||
			!strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), "a run holds 4 tests open") {
			t.Fatalf("limit %d: got %v, %v; want the %s refused, naming --max-tests-per-client and the 4 tests", limit, res, err, what)
		}
		t.Logf("limit %d: %v", limit, err)
	}
}

func TestCheck(t *testing.T) {
	good := Config{Idle: time.Second, Load: time.Second}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Config{
		"no load":       {Idle: time.Second},
		"short idle":    {Idle: 100 * time.Millisecond, Load: time.Second},
		"tiny step":     {Idle: time.Second, Load: time.Second, Step: time.Millisecond},
		"bad flow spec": {Idle: time.Second, Load: time.Second, Flow: spec.Spec{Protocol: spec.TCP, Length: -1}},
	} {
		if err := c.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestFlowSpecCarriesTheClasses: the flows' one test runs a stream each
// way per class, each stream with its class's TOS, for the load's time,
// whatever the flow options said; and a server charges it as any -P 4
// --bidir test.
func TestFlowSpecCarriesTheClasses(t *testing.T) {
	c := Config{Load: 7 * time.Second, Step: DefaultStep, Flow: spec.Default()}
	c.Flow.Streams, c.Flow.Reverse, c.Flow.Omit, c.Flow.TOS = 2, true, time.Second, 0x10
	s := c.flowSpec()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.TOS != 0 || s.Streams != len(FlowClasses) || !s.Bidir || s.Reverse || s.Duration != c.Load || s.Omit != 0 || s.Interval != DefaultStep {
		t.Errorf("flows' spec %+v", s)
	}
	for i, cl := range FlowClasses {
		up, down := streamIDs(i)
		if !s.ClientSendsOn(up) || s.ClientSendsOn(down) || s.TOSOn(up) != cl.TOS || s.TOSOn(down) != cl.TOS {
			t.Errorf("%s: streams %d (up) and %d (down) carry TOS %#x and %#x, want %#x", cl.Name, up, down, s.TOSOn(up), s.TOSOn(down), cl.TOS)
		}
	}
	plain := spec.Default()
	plain.Streams, plain.Bidir = 4, true
	if s.DataConns() != plain.DataConns() || s.BufferBytes() != plain.BufferBytes() {
		t.Errorf("charged %d connections and %d bytes of buffers, a -P 4 --bidir test %d and %d", s.DataConns(), s.BufferBytes(), plain.DataConns(), plain.BufferBytes())
	}
	want := map[string]int{"BE": 0, "BK": 0x20, "CS5": 0xa0, "EF": 0xb8} // flent's CS0, CS1, CS5, EF
	for _, cl := range append(append([]Class{}, FlowClasses...), ProbeClasses...) {
		if want[cl.Name] != cl.TOS {
			t.Errorf("%s: TOS %#x, want %#x", cl.Name, cl.TOS, want[cl.Name])
		}
	}
}

// TestProbeSeries bins samples by step at the step's middle, with their
// mean RTT in ms, and leaves out those before the axis's zero.
func TestProbeSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(x time.Time) float64 { return x.Sub(t0).Seconds() }
	s := func(ms, rttMs float64) rr.Sample {
		return rr.Sample{Done: t0.Add(time.Duration(ms * float64(time.Millisecond))), RTT: time.Duration(rttMs * float64(time.Millisecond))}
	}
	got := probeSeries([]rr.Sample{s(-5, 99), s(10, 20), s(150, 30), s(250, 40), s(610, 10)}, at, 200*time.Millisecond)
	want := []result.SeriesPoint{{T: 0.1, V: 25}, {T: 0.3, V: 40}, {T: 0.7, V: 10}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].T != want[i].T || abs(got[i].V-want[i].V) > 1e-9 {
			t.Errorf("step %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestIncompletePhase(t *testing.T) {
	c := Config{Idle: 5 * time.Second, Load: 10 * time.Second, After: 5 * time.Second}
	pts := []result.RRPoint{{Label: rrload.PhaseIdle, Seconds: 5}, {Label: rrload.PhaseLoaded, Seconds: 8.5}, {Label: rrload.PhaseAfter, Seconds: 5}}
	if got := incompletePhase(c, pts, true); !strings.Contains(got, "loaded phase ran 8.50 s of 10.00 s") {
		t.Errorf("got %q", got)
	}
	pts[1].Seconds = 9.5
	if got := incompletePhase(c, pts, true); got != "" {
		t.Errorf("9.5 s of 10 is complete: %q", got)
	}
	if got := incompletePhase(c, pts[:1], false); got != "" {
		t.Errorf("without a load only the idle phase is judged: %q", got)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestStartError: a server's refusal says what a run holds open at the
// server; a failure of the client's own (an algorithm the kernel lacks)
// is said as it is, without the refusal's explanation.
func TestStartError(t *testing.T) {
	refused := fmt.Errorf("%w: server is busy", control.ErrRefused)
	if got := startError("flows", refused).Error(); !strings.Contains(got, "server is busy") || !strings.Contains(got, "a run holds 4 tests open at the server at once") {
		t.Errorf("refusal: %q", got)
	}
	local := errors.New(`setting TCP_CONGESTION "nosuchcc": no such file or directory`)
	got := startError("flows", local)
	if !errors.Is(got, local) || got.Error() != `rrul: the flows: setting TCP_CONGESTION "nosuchcc": no such file or directory` {
		t.Errorf("local failure: %q", got)
	}
}

// TestFlowFiguresPerStream: each class's goodput, series and sender
// figures are its own stream's, up and down, not its direction's.
func TestFlowFiguresPerStream(t *testing.T) {
	p := len(FlowClasses)
	client := result.End{Role: result.RoleClient}
	server := result.End{Role: result.RoleServer}
	row := func() result.Interval { return result.Interval{Index: 0, Start: 0, End: 1} }
	ci, si := row(), row()
	for id := 1; id <= 2*p; id++ {
		up := id <= p
		rcvd := int64(id) * 1_000_000 // 8·id Mbit over 1 s
		snd := result.Stream{ID: id, Sender: true, Start: 0, End: 2, Bytes: rcvd + 5, Retransmits: int64(id)}
		rcv := result.Stream{ID: id, Start: 0, End: 2, Bytes: rcvd}
		if up {
			client.Streams, server.Streams = append(client.Streams, snd), append(server.Streams, rcv)
			ci.Streams, si.Streams = append(ci.Streams, result.StreamInterval{ID: id, Sender: true, Bytes: rcvd / 2}), append(si.Streams, result.StreamInterval{ID: id, Bytes: rcvd / 2})
		} else {
			server.Streams, client.Streams = append(server.Streams, snd), append(client.Streams, rcv)
			si.Streams, ci.Streams = append(si.Streams, result.StreamInterval{ID: id, Sender: true, Bytes: rcvd / 2}), append(ci.Streams, result.StreamInterval{ID: id, Bytes: rcvd / 2})
		}
	}
	client.Intervals, server.Intervals = []result.Interval{ci}, []result.Interval{si}
	t0 := time.Unix(1000, 0)
	fr := &flowRun{start: t0.Add(5 * time.Second), res: &result.Result{Local: client, Remote: server}}
	got := flowFigures(fr, func(x time.Time) float64 { return x.Sub(t0).Seconds() }, DefaultStep)
	if len(got) != 2*p {
		t.Fatalf("%d flows, want %d", len(got), 2*p)
	}
	for i, cl := range FlowClasses {
		upID, downID := streamIDs(i)
		for j, id := range []int{upID, downID} {
			f := got[2*i+j]
			dir := []string{"up", "down"}[j]
			wantBytes := int64(id) * 1_000_000
			if f.Class != cl.Name || f.TOS != cl.TOS || f.Direction != dir || f.Bytes != wantBytes || f.Seconds != 2 ||
				f.BitsPerSecond != float64(wantBytes)*8/2 || f.Retransmits != int64(id) {
				t.Errorf("%s %s: %+v; want stream %d's %d bytes over 2 s, %d retransmits", cl.Name, dir, f, id, wantBytes, id)
			}
			if len(f.Series) != 1 || f.Series[0].T != 6 || f.Series[0].V != float64(wantBytes)/2*8/1e6 {
				t.Errorf("%s %s: series %+v; want stream %d's %.0f Mbit/s at 6 s", cl.Name, dir, f.Series, id, float64(wantBytes)/2*8/1e6)
			}
		}
	}
}
