package advise

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

func TestTestLength(t *testing.T) {
	for _, tc := range []struct {
		rtt  time.Duration
		want time.Duration
	}{
		{0, MinTestLength},
		{time.Millisecond, MinTestLength},
		{20 * time.Millisecond, MinTestLength},
		// 10 Gbit/s × 100 ms needs 14 RTTs of slow start: 1.4 s, × 4.
		{100 * time.Millisecond, 6 * time.Second},
		// The submarine cable: 15 RTTs, 3.2 s, × 4.
		{215 * time.Millisecond, 13 * time.Second},
		{time.Second, MaxTestLength},
	} {
		if got := TestLength(tc.rtt, 1500); got != tc.want {
			t.Errorf("TestLength(%v) = %v, want %v", tc.rtt, got, tc.want)
		}
	}
}

func TestLengthen(t *testing.T) {
	const rtt = 215 * time.Millisecond
	noTimeline := measured(500e6, 5)
	noTimeline.TCP.SlowStart = nil
	for _, tc := range []struct {
		name  string
		m     Measurement
		ran   time.Duration
		want  time.Duration
		again bool
	}{
		{"no timeline", noTimeline, 5 * time.Second, 5 * time.Second, false},
		{"slow start a fifth of the test", measured(500e6, 5, slowStart(1, true)), 5 * time.Second, 5 * time.Second, false},
		// After the buffers are raised at 215 ms, slow start to 27 MB
		// took 3.4 s of a 5 s test: run 14 s.
		{"slow start most of the test", measured(500e6, 5, slowStart(3.4, true)), 5 * time.Second, 14 * time.Second, true},
		{"never ended", measured(500e6, 5, slowStart(0, false)), 5 * time.Second, 20 * time.Second, true},
		{"never ended, bounded", measured(500e6, 13, slowStart(0, false)), 13 * time.Second, MaxTestLength, true},
		{"already the longest", measured(500e6, 30, slowStart(0, false)), MaxTestLength, MaxTestLength, false},
		// A stream held at its capped window (1 MiB tcp_rmem) may never
		// leave slow start: a window limit, which a longer test keeps.
		{"window-limited", measured(24e6, 13, slowStart(0, false), shares(0.95, 0), window(694000, true)), 13 * time.Second, 13 * time.Second, false},
		// A window still opening (autotuning) is slow start's.
		{"window still opening", measured(24e6, 5, slowStart(0, false), shares(0.95, 0), window(694000, false)), 5 * time.Second, 20 * time.Second, true},
	} {
		got, again := Lengthen(tc.m, rtt, 1500, tc.ran)
		if got != tc.want || again != tc.again {
			t.Errorf("%s: Lengthen = %v, %v; want %v, %v", tc.name, got, again, tc.want, tc.again)
		}
	}
	cpu := measured(24e6, 5, slowStart(0, false))
	cpu.SenderCPU = 99
	if got, again := Lengthen(cpu, rtt, 1500, 5*time.Second); again {
		t.Errorf("a CPU-bound sender's test is run again for %v", got)
	}
}

func TestNextStreams(t *testing.T) {
	wl := func(n int, bps float64) StreamStep {
		return StreamStep{Streams: n, GoodputBps: bps, WindowLimited: true}
	}
	free := func(n int, bps float64) StreamStep { return StreamStep{Streams: n, GoodputBps: bps} }
	const step = 13 * time.Second
	for _, tc := range []struct {
		name  string
		steps []StreamStep
		spent time.Duration
		want  int
	}{
		{"nothing run", nil, 0, 0},
		{"not window-limited", []StreamStep{free(4, 941e6)}, step, 0},
		{"window-limited", []StreamStep{wl(4, 80.8e6)}, step, 16},
		{"still adding goodput", []StreamStep{wl(4, 80.8e6), wl(16, 322e6)}, 2 * step, 64},
		{"stopped adding goodput", []StreamStep{wl(4, 80.8e6), wl(16, 90e6)}, 2 * step, 0},
		{"at the most streams", []StreamStep{wl(16, 80.8e6), wl(64, 322e6)}, 2 * step, 0},
		{"out of time", []StreamStep{wl(4, 80.8e6), wl(16, 322e6)}, MaxStreamTime - step + time.Second, 0},
		{"bounded", []StreamStep{wl(32, 80.8e6)}, step, MaxPlanStreams},
	} {
		if got := NextStreams(tc.steps, tc.spent, step); got != tc.want {
			t.Errorf("%s: NextStreams = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// pathResult is a client→server test over 215 ms with streams streams
// whose windows allow perStream each, through a bottleneck whose TCP
// goodput is capacity: window-limited while the windows add up to less.
func pathResult(streams int, perStream, capacity float64) *result.Result {
	r := wanResult(streams, min(perStream, capacity/float64(streams)))
	if float64(streams)*perStream >= FullShare*capacity {
		for i := range r.Local.Streams {
			r.Local.Streams[i].TCPStats.RwndLimitedUs = 0
		}
	}
	return r
}

// TestEscalationFindsTheBottleneck is the guided run on the submarine
// cable (215 ms, 1 Gbit/s, tcp_rmem capped at 1 MiB: 20.2 Mbit/s a
// stream) with injected measurements: the stream count grows while the
// streams are window-limited, and the BDP comes out near 26.9 MB rather
// than the 4 streams' 2.2 MB.
func TestEscalationFindsTheBottleneck(t *testing.T) {
	const perStream, capacity = 20.2e6, 941e6
	in := Inputs{Probes: []Probe{{RTTus: 215000, Kernel: true}}, ProbeMTU: 1500, Single: pathResult(1, perStream, capacity)}
	length := TestLength(215*time.Millisecond, 1500)
	var results []*result.Result
	var spent time.Duration
	for streams := 4; streams > 0; streams = NextStreams(in.Steps, spent, length) {
		res := pathResult(streams, perStream, capacity)
		results = append(results, res)
		in.Steps = append(in.Steps, StepOf(MeasurementOf(res, result.RoleClient, 0)))
		spent += length
	}
	if got := len(in.Steps); got != 3 || in.Steps[2].Streams != 64 || in.Steps[2].WindowLimited {
		t.Fatalf("steps %+v, want 4, 16 and 64 streams, the last not window-limited", in.Steps)
	}
	in.Multi = results[BestStep(in.Steps)]
	rep := Analyze(in)
	want := figures.BDP(1e9, 215*time.Millisecond)
	if math.Abs(rep.BDPBytes-want) > 0.15*want {
		t.Errorf("BDP %.1f MB, want %.1f MB ± 15%%", rep.BDPBytes/1e6, want/1e6)
	}
	if rep.Verdict.Limit != LimitReceiverWindow {
		t.Errorf("verdict %s: %s", rep.Verdict.Limit, rep.Verdict.Summary)
	}
	if rep.Advice.Buffer < int64(want) {
		t.Errorf("advised buffer %d is below the BDP", rep.Advice.Buffer)
	}
	for _, n := range rep.Advice.Notes {
		if strings.Contains(n, "window-limited too") {
			t.Errorf("the note on window-limited streams stays though 64 streams filled the path: %s", n)
		}
	}

	// Without the escalation, the 4 streams' goodput is the bottleneck.
	in4 := in
	in4.Multi, in4.Steps = results[0], in.Steps[:1]
	if rep4 := Analyze(in4); rep4.BDPBytes > 0.2*want {
		t.Errorf("4 window-limited streams give a BDP of %.1f MB: the injected path is not the one under test", rep4.BDPBytes/1e6)
	}
}

func TestBestStep(t *testing.T) {
	if got := BestStep(nil); got != -1 {
		t.Errorf("BestStep(nil) = %d", got)
	}
	if got := BestStep([]StreamStep{{GoodputBps: 1}, {GoodputBps: 3}, {GoodputBps: 2}}); got != 1 {
		t.Errorf("BestStep = %d, want 1", got)
	}
}

func TestTrainOf(t *testing.T) {
	for _, tc := range []struct {
		name         string
		received     int64
		sent, recv   float64
		wantCapacity float64
	}{
		{"spaced by the path", 5624, 19.8e9, 1.018e9, 1.018e9},
		{"paced by the sender", 10000, 700e6, 690e6, 0},
		{"too few arrived", 50, 19.8e9, 1e9, 0},
		{"nothing arrived", 0, 19.8e9, 0, 0},
	} {
		if got := TrainOf(10000, tc.received, tc.sent, tc.recv).CapacityBps; got != tc.wantCapacity {
			t.Errorf("%s: capacity %.4g, want %.4g", tc.name, got, tc.wantCapacity)
		}
	}
	if MedianTrain(nil) != nil {
		t.Error("MedianTrain(nil) is not nil")
	}
	// Measured on the loaded lab: a train spread out by a stalled reader
	// (650 Mbit/s), one let go in a burst by a stalled writer (8.88 Gbit/s).
	trains := []Train{{CapacityBps: 650e6}, {CapacityBps: 8.88e9}, {}, {CapacityBps: 1.018e9}}
	if got := MedianTrain(trains); got.CapacityBps != 1.018e9 {
		t.Errorf("MedianTrain took %.4g, want the median 1.018e9", got.CapacityBps)
	}
	if got := MedianTrain(trains[:2]); got.CapacityBps != 650e6 {
		t.Errorf("MedianTrain of two took %.4g, want the lower", got.CapacityBps)
	}
	if got := MedianTrain([]Train{{Error: "a"}, {Error: "b"}}); got.Error != "b" {
		t.Errorf("MedianTrain of failed trains took %q, want the last", got.Error)
	}
}

// A train that measured the capacity sets the bottleneck where window-
// limited streams fell short of it, as a line rate.
func TestAnalyzeTakesTheTrain(t *testing.T) {
	in := Inputs{Probes: []Probe{{RTTus: 215000, Kernel: true}}, ProbeMTU: 1500,
		Single: pathResult(1, 20.2e6, 941e6), Multi: pathResult(4, 20.2e6, 941e6),
		Train: &Train{Datagrams: 10000, Received: 5624, SentWireBps: 19.8e9, RecvWireBps: 1e9, CapacityBps: 1e9}}
	rep := Analyze(in)
	want := figures.BDP(1e9, 215*time.Millisecond)
	if rep.BottleneckSource != "packet train" || math.Abs(rep.BDPBytes-want) > 0.01*want {
		t.Errorf("bottleneck %s, BDP %.1f MB; want the packet train's, %.1f MB", rep.BottleneckSource, rep.BDPBytes/1e6, want/1e6)
	}
	if !near(rep.IdealBps, figures.LineRateGoodput(1e9, 1500), 1e-9) {
		t.Errorf("ideal %.4g, want the line-rate goodput of 1 Gbit/s", rep.IdealBps)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Packet train  10000 datagrams of 1472 B sent at", "5624 arrived at", "(packet train)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// A train slower than what the tests reached does not count.
	in.Train = &Train{CapacityBps: 50e6}
	if rep := Analyze(in); rep.BottleneckSource != "measured" {
		t.Errorf("a train slower than the tests set the bottleneck (%s)", rep.BottleneckSource)
	}
}

// The lab's 215 ms, 1 Gbit/s path beside a CPU hog: the packet trains went
// out no faster than they arrived (the hog starved the sender), one stream
// read 662.7 Mbit/s and four no more. The bottleneck is then a lower bound
// the host limited, the verdict never says one stream fills the path, and
// the advice asks for an idle host or --bottleneck; a train that did
// outrun the path leaves the verdict as it was.
func TestAnalyzeHostPacedTrain(t *testing.T) {
	const single = 662.7e6
	in := Inputs{Probes: []Probe{{RTTus: 215000, Kernel: true}}, ProbeMTU: 1500,
		Single: pathResult(1, single, single), Multi: pathResult(4, single/4, single),
		Train: &Train{Datagrams: 10000, Received: 10000, SentWireBps: 700e6, RecvWireBps: 690e6}}
	// Windows of 40 MB, past the BDP, and slow start over: no host's
	// window or slow start held the streams back.
	for _, r := range []*result.Result{in.Single, in.Multi} {
		for i := range r.Local.Streams {
			st := &r.Local.Streams[i]
			st.TCPStats.RwndLimitedUs, st.TCPStats.MaxSndWnd, st.TCPStats.SlowStartOngoing = 0, 40e6, false
			for k := range st.TCPTimeline.Samples {
				st.TCPTimeline.Samples[k].SndWnd = 40e6
			}
		}
	}
	rep := Analyze(in)
	if rep.BottleneckSource != "measured" || !strings.Contains(rep.BottleneckLowerBound, "the sending host, not the path, set their pace") {
		t.Fatalf("bottleneck %s, lower bound %q: want measured, a lower bound the host set", rep.BottleneckSource, rep.BottleneckLowerBound)
	}
	if rep.Verdict.Limit == LimitNetwork || strings.Contains(rep.Verdict.Summary, "fills the path") || strings.Contains(rep.Verdict.Summary, "path full") {
		t.Fatalf("verdict %s: %s", rep.Verdict.Limit, rep.Verdict.Summary)
	}
	if rep.Verdict.Limit != LimitUnknown || !strings.Contains(rep.Verdict.Summary, "is a lower bound the host limited") {
		t.Errorf("verdict %s: %s; want unknown, the bottleneck a lower bound", rep.Verdict.Limit, rep.Verdict.Summary)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(measured), a lower bound: the packet trains went out at 700 Mbits/sec and arrived at 690 Mbits/sec",
		"the path's capacity is unknown above", "or give --bottleneck RATE"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// The same tests with a train that outran the path: its capacity
	// counts, and nothing is a lower bound.
	in.Train = &Train{Datagrams: 10000, Received: 5624, SentWireBps: 19.8e9, RecvWireBps: 1e9, CapacityBps: 1e9}
	if rep := Analyze(in); rep.BottleneckLowerBound != "" || rep.BottleneckSource != "packet train" {
		t.Errorf("a train that outran the path: bottleneck %s, lower bound %q", rep.BottleneckSource, rep.BottleneckLowerBound)
	}
	// No train is no lower bound: the same tests then read as a full
	// path, as they did before the train's pace was judged.
	in.Train = nil
	if rep := Analyze(in); rep.BottleneckLowerBound != "" || rep.Verdict.Limit != LimitNetwork {
		t.Errorf("no train: lower bound %q, verdict %s", rep.BottleneckLowerBound, rep.Verdict.Summary)
	}
}

func TestHostPacedTrain(t *testing.T) {
	for _, tc := range []struct {
		name      string
		t         *Train
		fromTrain bool
		want      bool
	}{
		{"paced by the sender", &Train{Received: 10000, SentWireBps: 700e6, RecvWireBps: 690e6}, false, true},
		{"outran the path", &Train{Received: 5624, SentWireBps: 19.8e9, RecvWireBps: 1e9, CapacityBps: 1e9}, false, false},
		{"the bottleneck is the train's", &Train{Received: 10000, SentWireBps: 700e6, RecvWireBps: 690e6}, true, false},
		{"too few arrived", &Train{Received: 50, SentWireBps: 700e6, RecvWireBps: 690e6}, false, false},
		{"failed", &Train{Error: "refused"}, false, false},
		{"none", nil, false, false},
	} {
		if got := HostPacedTrain(tc.t, tc.fromTrain) != ""; got != tc.want {
			t.Errorf("%s: lower bound %v, want %v", tc.name, got, tc.want)
		}
	}
}
