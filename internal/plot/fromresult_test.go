package plot

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

func tcpRun() *result.Result {
	tl := &result.TCPTimeline{Period: 0.5}
	for i := 0; i <= 4; i++ {
		tl.Samples = append(tl.Samples, result.TCPSample{T: float64(i) / 2, RTTus: uint32(40000 + 1000*i), SndMSS: 1448, SndCwnd: uint32(100 + 10*i), TotalRetrans: uint32(3 * i)})
	}
	iv := func(i int, sender bool, bytes int64) result.Interval {
		return result.Interval{Index: i, Start: float64(i), End: float64(i + 1),
			Streams: []result.StreamInterval{{ID: 1, Sender: sender, Bytes: bytes}}}
	}
	return &result.Result{
		Spec:      spec.Spec{Protocol: spec.TCP, Streams: 1, Duration: 2 * time.Second},
		StartedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Local: result.End{Role: result.RoleClient, Host: result.Host{Hostname: "alpha", Version: "v1.2.3"},
			Streams:   []result.Stream{{ID: 1, Sender: true, End: 2, Bytes: 250e6, TCPTimeline: tl}},
			Intervals: []result.Interval{iv(0, true, 125e6), iv(1, true, 125e6)}},
		Remote: result.End{Role: result.RoleServer, Host: result.Host{Hostname: "beta"},
			Streams:   []result.Stream{{ID: 1, End: 2, Bytes: 249e6}},
			Intervals: []result.Interval{iv(0, false, 124e6), iv(1, false, 125e6)}},
	}
}

func TestTimelineOfTCP(t *testing.T) {
	r := tcpRun()
	in, err := TimelineOf(r, "run.json")
	if err != nil {
		t.Fatal(err)
	}
	good := in.Goodput[0].Points
	// The receiver's bytes: 124e6 and 125e6 bytes over 1 s each.
	if len(good) != 2 || good[0] != (Point{0.5, 124e6 * 8}) || good[1] != (Point{1.5, 125e6 * 8}) {
		t.Fatalf("goodput %v", good)
	}
	cw, rtt, re := in.Cwnd[0].Points, in.RTT[0].Points, in.Retransmits[0].Points
	if len(cw) != 5 || cw[2] != (Point{1, 120 * 1448}) || rtt[4] != (Point{2, 44}) {
		t.Fatalf("cwnd %v rtt %v", cw, rtt)
	}
	if len(re) != 4 || re[0] != (Point{0.5, 3}) {
		t.Fatalf("retransmits between samples: %v", re)
	}
	if got := in.Footer.String(); !strings.Contains(got, "run.json · alpha → beta · 2026-11-30 12:00 UTC · wireperf v1.2.3") {
		t.Fatalf("footer %q", got)
	}
	f, err := Timeline(in)
	if err != nil || len(f.Panels) != 4 {
		t.Fatalf("want goodput, cwnd, RTT and retransmit panels: %v %v", err, f)
	}
	if err := f.Write(&strings.Builder{}, "svg"); err != nil {
		t.Fatal(err)
	}
}

func TestTimelineOfUDP(t *testing.T) {
	r := tcpRun()
	r.Spec.Protocol = spec.UDP
	for i := range r.Remote.Intervals {
		r.Remote.Intervals[i].Streams[0].UDP = &result.UDP{Received: 90, Lost: 10, Expected: 100, JitterMs: 0.5 + float64(i), JitterSamples: 89}
	}
	in, err := TimelineOf(r, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Cwnd) != 0 || len(in.Loss) != 1 || in.Loss[0].Points[1] != (Point{1.5, 10}) || in.Jitter[0].Points[1] != (Point{1.5, 1.5}) {
		t.Fatalf("UDP timeline: loss %v jitter %v cwnd %v", in.Loss, in.Jitter, in.Cwnd)
	}
	f, err := Timeline(in)
	if err != nil || len(f.Panels) != 3 {
		t.Fatalf("want goodput, loss and jitter panels: %v", err)
	}
}

func TestTimelineOfNoIntervals(t *testing.T) {
	r := tcpRun()
	r.Local.Intervals, r.Remote.Intervals = nil, nil
	r.Local.Streams[0].TCPTimeline = nil
	if _, err := TimelineOf(r, ""); err == nil {
		t.Fatal("a run with nothing over time gave a timeline")
	}
}

func rrRun() *result.Result {
	r := tcpRun()
	r.Spec.Protocol = spec.RR
	h := &result.Histogram{Unit: "us", Count: 6, Buckets: []result.HistogramBucket{{From: 100, To: 110, Count: 2}, {From: 200, To: 220, Count: 4}}}
	r.Local.RR = &result.RR{Mode: "udp", Points: []result.RRPoint{
		{Label: "idle", Seconds: 3, RTT: result.Percentiles{P50: 40000, P99: 41000, P999: 42000}, RTTHistogram: h},
		{Label: "loaded", Seconds: 10, RTT: result.Percentiles{P50: 180000, P99: 320000}},
		{Label: "after", Seconds: 3, RTT: result.Percentiles{P50: 40500, P99: 42000}},
	}}
	r.Local.RR.Load = &result.RRLoad{Protocol: "tcp", Streams: 4, Direction: "up", LoadResult: tcpRun()}
	return r
}

func TestLatencyOf(t *testing.T) {
	in, err := LatencyOf(rrRun(), "rr.json")
	if err != nil {
		t.Fatal(err)
	}
	s := in.Series[0]
	if s.Name != "idle" || len(s.Buckets) != 2 || s.Buckets[1] != (Bucket{200, 220, 4}) || s.P50 != 40000 || s.P999 != 42000 {
		t.Fatalf("latency series %+v", s)
	}
	if _, err := LatencyOf(tcpRun(), ""); err == nil {
		t.Fatal("a bulk run gave a latency figure")
	}
}

func TestLoadOf(t *testing.T) {
	in, err := LoadOf(rrRun(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []LoadPhase{{"idle", 0, 3, 40, 41}, {"loaded", 3, 13, 180, 320}, {"after", 13, 16, 40.5, 42}}
	for i, ph := range want {
		if in.Phases[i] != ph {
			t.Errorf("phase %d: %+v, want %+v", i, in.Phases[i], ph)
		}
	}
	// The load's TCP RTT sits in the loaded phase: its t=0 sample at 3 s.
	if len(in.RTT) != 1 || in.RTT[0].Points[0] != (Point{3, 40}) {
		t.Fatalf("load RTT %v", in.RTT)
	}
	r := rrRun()
	r.Local.RR.Load = nil
	if _, err := LoadOf(r, ""); err == nil {
		t.Fatal("an rr run without --load gave a load figure")
	}
}

func TestUDPMonOf(t *testing.T) {
	sw := &udpmon.Sweep{Server: "beta", Points: []udpmon.Point{
		{Size: 512, Spacing: 20 * time.Microsecond, RecvWireBps: 2e8, Sent: 1000, Reordered: 10, LossPercent: 1},
		{Size: 1472, Spacing: 10 * time.Microsecond, RecvWireBps: 9e8, Sent: 1000},
		{Size: 512, Spacing: 10 * time.Microsecond, RecvWireBps: 4e8, Sent: 1000},
	}}
	in, err := UDPMonOf(sw, "sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Series) != 2 || in.Series[0].Name != "1472 B" || in.Series[1].DatagramBits != float64(udpmon.WireBytes(512)*8) {
		t.Fatalf("series %+v", in.Series)
	}
	pts := in.Series[1].Points
	if pts[0].SpacingUs != 10 || pts[1] != (UDPMonPoint{20, 2e8, 1, 1}) {
		t.Fatalf("512 B points %+v", pts)
	}
}
