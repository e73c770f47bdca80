package guide

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

func TestProbeRTT(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
			c.Close()
		}
	}()
	probes, info, err := ProbeRTT(context.Background(), ln.Addr().String(), "", 3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(probes) != 3 {
		t.Fatalf("%d probes, want 3", len(probes))
	}
	for _, p := range probes {
		if p.RTTus == 0 && !p.Kernel {
			t.Errorf("probe %+v has no RTT", p)
		}
		if p.Kernel != (runtime.GOOS == "linux") {
			t.Errorf("probe %+v: kernel timing on %s should be %v", p, runtime.GOOS, runtime.GOOS == "linux")
		}
	}
	if info == nil || info.SndMSS == 0 {
		t.Errorf("no MSS from the probes: %+v", info)
	}
}

func TestProbeRTTRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, _, err := ProbeRTT(context.Background(), addr, "", 2, time.Second); err == nil {
		t.Error("probing a closed port succeeded")
	}
}

func TestRunRejectsBadSpec(t *testing.T) {
	if _, err := Run(context.Background(), Config{Host: "127.0.0.1", Port: 1, Congestion: "NOT VALID"}); err == nil {
		t.Error("a bad congestion name was accepted")
	}
}

// A guided run on loopback without --bottleneck: the length as given,
// the trains sent and judged, every multi-stream test in the report.
func TestRunOnLoopback(t *testing.T) {
	srv := loopserver.Start(t)
	ctx := context.Background()

	var steps []string
	rep, err := Run(ctx, Config{Host: "127.0.0.1", Port: srv.Addr().Port, Duration: 500 * time.Millisecond, Streams: 2, Probes: 2,
		Progress: func(s string) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.LengthGiven || rep.TestSeconds != 0.5 {
		t.Errorf("length %.1f s, given %v; want 0.5 s as given", rep.TestSeconds, rep.LengthGiven)
	}
	if rep.Train == nil || rep.Train.Error != "" || rep.Train.Received == 0 || rep.Train.SentWireBps <= 0 {
		t.Errorf("packet train %+v", rep.Train)
	}
	trains := 0
	for _, s := range steps {
		if strings.HasPrefix(s, "packet train") {
			trains++
		}
	}
	if trains != advise.Trains {
		t.Errorf("%d packet trains, want %d: %q", trains, advise.Trains, steps)
	}
	if len(rep.StreamSteps) == 0 || rep.StreamSteps[0].Streams != 2 || rep.Multi == nil {
		t.Fatalf("multi-stream tests %+v", rep.StreamSteps)
	}
	if best := rep.StreamSteps[advise.BestStep(rep.StreamSteps)]; rep.Multi.Streams != best.Streams {
		t.Errorf("the report's multi-stream test has %d streams, the best step %d", rep.Multi.Streams, best.Streams)
	}
	// Every test is in the record: the single-stream one, the trains are
	// not (they are summed in Train), each multi-stream one.
	if want := 1 + len(rep.StreamSteps); len(rep.Results) != want {
		t.Errorf("%d results, want %d", len(rep.Results), want)
	}
}
