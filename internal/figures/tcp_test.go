package figures

import (
	"math"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpinfo"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// The worked numbers of docs/metrics.md: the line-rate arithmetic, the
// BDPs of 1 Gbit/s at 215 ms and 622 Mbit/s at 19 ms, and window ÷ RTT.
func TestArithmetic(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"1 Gbit/s Ethernet, MTU 1500: 941 Mbit/s", LineRateGoodput(1e9, 1500), 941.47e6},
		{"1 Gbit/s Ethernet, MTU 9000: 990 Mbit/s", LineRateGoodput(1e9, 9000), 990.04e6},
		{"MTU 0 means 1500", LineRateGoodput(1e9, 0), 941.47e6},
		{"BDP 1 Gbit/s × 215 ms = 26.9 MB", BDP(1e9, 215*time.Millisecond), 26.875e6},
		{"BDP 622 Mbit/s × 19 ms = 1.48 MB", BDP(622e6, 19*time.Millisecond), 1.477e6},
		{"64 KiB ÷ 215 ms = 2.44 Mbit/s", WindowRate(64<<10, 215*time.Millisecond), 2.4386e6},
		{"16 MiB ÷ 215 ms = 624 Mbit/s", WindowRate(16<<20, 215*time.Millisecond), 624.3e6},
	}
	for _, tc := range tests {
		if !near(tc.got, tc.want, 0.001) {
			t.Errorf("%s: got %.6g", tc.name, tc.got)
		}
	}
	if LineRateGoodput(0, 1500) != 0 || LineRateGoodput(1e9, 40) != 0 || BDP(1e9, 0) != 0 || WindowRate(0, time.Second) != 0 {
		t.Error("degenerate inputs should give 0")
	}
}

func TestLimited(t *testing.T) {
	tests := []struct {
		busy, rwnd, sndbuf uint64
		ok                 bool
		wRwnd, wSnd, wNet  float64
	}{
		{0, 0, 0, false, 0, 0, 0},
		{1000, 0, 0, true, 0, 0, 1},
		{1000, 700, 100, true, 0.7, 0.1, 0.2},
		{1000, 1200, 0, true, 1, 0, 0},      // a chronograph past busy is capped
		{1000, 600, 600, true, 0.6, 0.4, 0}, // and so is the sum
	}
	for _, tc := range tests {
		lt, ok := Limited(tc.busy, tc.rwnd, tc.sndbuf)
		if ok != tc.ok {
			t.Errorf("Limited(%d, %d, %d) ok = %v", tc.busy, tc.rwnd, tc.sndbuf, ok)
			continue
		}
		if !ok {
			continue
		}
		if !near(lt.Rwnd, tc.wRwnd, 1e-9) || !near(lt.Sndbuf, tc.wSnd, 1e-9) || math.Abs(lt.Network-tc.wNet) > 1e-9 {
			t.Errorf("Limited(%d, %d, %d) = %+v, want %.2f/%.2f/%.2f", tc.busy, tc.rwnd, tc.sndbuf, lt, tc.wRwnd, tc.wSnd, tc.wNet)
		}
		if s := lt.Rwnd + lt.Sndbuf + lt.Network; math.Abs(s-1) > 1e-9 {
			t.Errorf("shares add up to %v", s)
		}
	}
}

func TestRFC6349(t *testing.T) {
	if e, ok := Efficiency(1000000, 10000); !ok || !near(e, 99, 1e-9) {
		t.Errorf("Efficiency = %v, %v; want 99", e, ok)
	}
	if e, ok := Efficiency(1000, 0); !ok || e != 100 {
		t.Errorf("Efficiency without loss = %v", e)
	}
	if _, ok := Efficiency(0, 0); ok {
		t.Error("Efficiency of nothing sent should be unknown")
	}
	if e, _ := Efficiency(100, 200); e != 0 {
		t.Errorf("Efficiency with more retransmitted than sent = %v, want 0", e)
	}
	if d, ok := BufferDelay(230*time.Millisecond, 200*time.Millisecond); !ok || !near(d, 15, 1e-9) {
		t.Errorf("BufferDelay = %v, %v; want 15", d, ok)
	}
	if _, ok := BufferDelay(time.Second, 0); ok {
		t.Error("BufferDelay without a baseline should be unknown")
	}
	// 100 MB at an ideal 800 Mbit/s takes 1 s; in 2.5 s the ratio is 2.5.
	if r, ok := TransferTimeRatio(100e6, 2.5, 800e6); !ok || !near(r, 2.5, 1e-9) {
		t.Errorf("TransferTimeRatio = %v, %v; want 2.5", r, ok)
	}
	if _, ok := TransferTimeRatio(100, 1, 0); ok {
		t.Error("TransferTimeRatio without an ideal rate should be unknown")
	}
}

// sender builds a sending stream with TCP statistics and a timeline.
func sender(id int, bytes int64, secs float64, st result.TCPStats, tl *result.TCPTimeline) result.Stream {
	return result.Stream{ID: id, Sender: true, End: secs, Bytes: bytes, TCPStats: &st, TCPTimeline: tl,
		Retransmits: int64(st.BytesRetrans / 1448), TCPInfo: &tcpinfo.Info{PMTU: 1500}}
}

func TestFiguresOf(t *testing.T) {
	tl := &result.TCPTimeline{Period: 0.1}
	for i := 1; i <= 40; i++ {
		wnd := uint32(min(i, 10)) * 70000 // grows, then plateaus at 700 kB
		tl.Samples = append(tl.Samples, result.TCPSample{T: float64(i) / 10, SndWnd: wnd, BytesAcked: uint64(i) * 1e6})
	}
	st := result.TCPStats{
		BytesSent: 40e6, BytesRetrans: 0, BusyUs: 4e6, RwndLimitedUs: 2.8e6,
		BaselineRTTus: 215000, MeanRTTus: 218000, RTTSamples: 40, MaxSndWnd: 700000,
		SlowStart: &result.SlowStart{End: 1, Cause: result.SlowStartSsthresh, BytesAcked: 10e6}, Duration: 4,
	}
	s := sender(1, 40e6, 4, st, tl)
	f := FiguresOf(&s)
	if f == nil || f.Limited == nil || !near(f.Limited.Rwnd, 0.7, 1e-9) {
		t.Fatalf("figures %+v", f)
	}
	if f.EfficiencyPercent == nil || *f.EfficiencyPercent != 100 {
		t.Errorf("efficiency %v", f.EfficiencyPercent)
	}
	if f.BufferDelayPercent == nil || !near(*f.BufferDelayPercent, 100*3.0/215, 1e-9) {
		t.Errorf("buffer delay %v", f.BufferDelayPercent)
	}
	if f.WindowPlateau == nil || !*f.WindowPlateau {
		t.Errorf("window plateau %v, want true", f.WindowPlateau)
	}
	ss := f.SlowStart
	if ss == nil || !ss.Ended || !near(ss.Share, 0.25, 1e-9) || !near(ss.RateBefore, 80e6, 1e-9) || !near(ss.RateAfter, 80e6, 1e-9) {
		t.Errorf("slow start %+v", ss)
	}
	if FiguresOf(&result.Stream{}) != nil {
		t.Error("a stream without TCP statistics has no figures")
	}
}

func TestDirectionOf(t *testing.T) {
	a := sender(1, 50e6, 5, result.TCPStats{BytesSent: 50e6, BytesRetrans: 1e6, BusyUs: 5e6, RwndLimitedUs: 1e6,
		BaselineRTTus: 20000, MeanRTTus: 30000, RTTSamples: 50, CwndReductions: 3,
		SlowStart: &result.SlowStart{End: 0.5, Cause: result.SlowStartLoss}}, nil)
	b := sender(2, 50e6, 5, result.TCPStats{BytesSent: 50e6, BytesRetrans: 0, BusyUs: 5e6, SndbufLimitedUs: 1e6,
		BaselineRTTus: 21000, MeanRTTus: 40000, RTTSamples: 50, CwndReductions: 1,
		SlowStart: &result.SlowStart{End: 1.5, Cause: result.SlowStartSsthresh}}, nil)
	recv := func(id int) result.Stream { return result.Stream{ID: id, End: 5, Bytes: 50e6} }
	r := &result.Result{
		Local:  result.End{Role: result.RoleClient, Streams: []result.Stream{a, b}},
		Remote: result.End{Role: result.RoleServer, Streams: []result.Stream{recv(1), recv(2)}},
	}
	dirs := r.Directions()
	if len(dirs) != 1 {
		t.Fatalf("%d directions", len(dirs))
	}
	df := DirectionOf(dirs[0], 1e9)
	if df.Streams != 2 || df.BytesSent != 100e6 || df.CwndReductions != 4 || df.BaselineRTTus != 20000 || df.MeanRTTus != 35000 {
		t.Errorf("sums %+v", df)
	}
	if !near(df.Limited.Rwnd, 0.1, 1e-9) || !near(df.Limited.Sndbuf, 0.1, 1e-9) {
		t.Errorf("limited %+v", df.Limited)
	}
	if !near(*df.EfficiencyPercent, 99, 1e-9) {
		t.Errorf("efficiency %v", *df.EfficiencyPercent)
	}
	if df.SlowStartFirst != 0.5 || df.SlowStartLast != 1.5 {
		t.Errorf("slow start %v-%v", df.SlowStartFirst, df.SlowStartLast)
	}
	// 100 MB in 5 s is 160 Mbit/s against an ideal 941.5: ratio 5.88.
	if df.TransferTimeRatio == nil || !near(*df.TransferTimeRatio, LineRateGoodput(1e9, 1500)/160e6, 1e-6) {
		t.Errorf("transfer time ratio %v", df.TransferTimeRatio)
	}
	if df := DirectionOf(dirs[0], 0); df.TransferTimeRatio != nil {
		t.Error("no bottleneck, no Transfer Time Ratio")
	}
}
