package emit_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"

	"github.com/wireperf/wireperf/internal/cli"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// omitDoc is what -J says about -O: the test's length, and each interval.
type omitDoc struct {
	Start struct {
		TestStart struct {
			Omit     float64 `json:"omit"`
			Duration float64 `json:"duration"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Tail bool `json:"tail"`
		Sum  struct {
			Start   float64 `json:"start"`
			End     float64 `json:"end"`
			Omitted bool    `json:"omitted"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumSent struct {
			Start float64 `json:"start"`
			End   float64 `json:"end"`
		} `json:"sum_sent"`
	} `json:"end"`
}

// listening waits, at most 5 s, until a wireperf server accepts on
// port; false when the server exited first (exited receives its code)
// or the time ran out.
func listening(port string, exited chan int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return true
		}
		select {
		case code := <-exited:
			exited <- code
			return false
		default:
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: a port another process opens, until the deadline above
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// waitBound waits, at most 5 s, until port is taken, without connecting
// to it: a connection would be the one test of iperf3 -s -1.
func waitBound(t *testing.T, port string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			return
		}
		_ = l.Close()
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 did not bind port %s", port)
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: a port another process binds, until the deadline above
	}
}

// TestOmitAsIperf3 runs `-t 1 -O 2` with iperf3 and with wireperf on
// loopback: the omitted start comes before -t (so -O may exceed -t), and
// wireperf's -J reports it as iperf3's does: the omitted intervals, then
// -t on a clock that starts again at 0.
func TestOmitAsIperf3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 3 s tests")
	}
	iperf3Binary := iperf3bin.Need(t)
	args := []string{"-t", "1", "-O", "2", "-J"}

	// iperf3 on both ends.
	port := strconv.Itoa(loopback.FreePort(t))
	srv := exec.Command(iperf3Binary, "-s", "-1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	waitBound(t, port)
	out, err := exec.Command(iperf3Binary, append([]string{"-c", "127.0.0.1", "-p", port}, args...)...).Output()
	if err != nil {
		t.Fatalf("iperf3: %v", err)
	}
	var want omitDoc
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}

	// wireperf on both ends.
	// A free port can be taken by another test's process before the
	// server binds it: then the server exits at once, and another port
	// is tried.
	runWireperf := func() (omitDoc, time.Duration) {
		var served chan int
		serverLog := filepath.Join(t.TempDir(), "server.log") // its report and log, out of the test's output
		for try := 1; ; try++ {
			port = strconv.Itoa(loopback.FreePort(t))
			served = make(chan int, 1)
			go func(port string) { served <- cli.Main([]string{"-s", "-1", "-p", port, "--logfile", serverLog}) }(port)
			if listening(port, served) {
				break
			}
			if try == 3 {
				t.Fatalf("a wireperf server did not listen on three free ports; its log:\n%s", readFile(serverLog))
			}
		}
		report := filepath.Join(t.TempDir(), "report.json")
		began := time.Now()
		if code := cli.Main(append([]string{"-c", "127.0.0.1", "-p", port, "--logfile", report}, args...)); code != 0 {
			t.Fatalf("wireperf client exit %d", code)
		}
		ran := time.Since(began)
		if code := <-served; code != 0 {
			t.Fatalf("wireperf server exit %d", code)
		}
		data, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		var got omitDoc
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		return got, ran
	}
	// The accounting is checked on every run; the rows' times, which a
	// loaded machine's late timer moves (a row cut 236 ms late was seen,
	// and wireperf's rows say when they were really cut), on the best of
	// three runs.
	var timing []string
	for attempt := 1; attempt <= 3; attempt++ {
		got, ran := runWireperf()
		timing = checkOmitRun(t, got, want, ran)
		if len(timing) == 0 {
			return
		}
		t.Logf("run %d: %s", attempt, strings.Join(timing, "; "))
	}
	t.Errorf("the counted rows' times strayed in three runs; the last: %s", strings.Join(timing, "; "))
}

// checkOmitRun fails t where wireperf's -J accounts for -O otherwise than
// iperf3's, and returns what strays in its rows' and totals' times.
func checkOmitRun(t *testing.T, got, want omitDoc, ran time.Duration) (timing []string) {
	t.Helper()
	if ran < 2900*time.Millisecond {
		t.Errorf("-t 1 -O 2 ran %v; iperf3 runs 3 s", ran)
	}
	if got.Start.TestStart != want.Start.TestStart {
		t.Errorf("test_start %+v, iperf3 %+v", got.Start.TestStart, want.Start.TestStart)
	}
	// The counted intervals, on iperf3's clock. (Which omitted intervals
	// iperf3 prints varies: its omit timer and its interval timer fire at
	// the same moment, in either order.)
	counted := func(d omitDoc) (spans [][2]float64, omittedFirst bool) {
		omittedFirst = len(d.Intervals) > 0 && d.Intervals[0].Sum.Omitted
		for _, iv := range d.Intervals {
			if iv.Tail {
				continue // wireperf's tail row, which iperf3 leaves out of its rows
			}
			if !iv.Sum.Omitted {
				spans = append(spans, [2]float64{iv.Sum.Start, iv.Sum.End})
			} else if len(spans) > 0 {
				omittedFirst = false // an omitted interval after a counted one
			}
		}
		return spans, omittedFirst
	}
	gotSpans, gotFirst := counted(got)
	wantSpans, wantFirst := counted(want)
	if !gotFirst || !wantFirst {
		t.Errorf("omitted intervals first: wireperf %v, iperf3 %v", gotFirst, wantFirst)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.15 }
	if len(gotSpans) != len(wantSpans) {
		t.Fatalf("counted intervals %v, iperf3 %v", gotSpans, wantSpans)
	}
	// Their times as iperf3 means them (its own sometimes straddle the
	// same race): second k of -t is k to k+1.
	for k, g := range gotSpans {
		if !near(g[0], float64(k)) || !near(g[1], float64(k+1)) {
			timing = append(timing, fmt.Sprintf("counted interval %d: %.3f-%.3f, want %d-%d", k, g[0], g[1], k, k+1))
		}
	}
	// The counted span is -t, as iperf3 means it. iperf3's own end time
	// straddles the same race on a loaded machine (0.77 s for -t 1 seen),
	// so it is compared only where it keeps its own rule.
	g, w := got.End.SumSent, want.End.SumSent
	if !near(g.Start, 0) || !near(g.End, 1) {
		timing = append(timing, fmt.Sprintf("sum_sent %.3f-%.3f, want 0-1 (-t 1 after -O 2)", g.Start, g.End))
	}
	if near(w.End, 1) && (!near(g.Start, w.Start) || !near(g.End, w.End)) {
		timing = append(timing, fmt.Sprintf("sum_sent %.3f-%.3f, iperf3 %.3f-%.3f", g.Start, g.End, w.Start, w.End))
	} else if !near(w.End, 1) {
		t.Logf("iperf3's own sum_sent %.3f-%.3f strays from its -t; not compared", w.Start, w.End)
	}
	return timing
}
