package stats

import (
	"math"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

type timed struct {
	s, r   int64
	shared bool
}

func fillTiming(pkts []timed, source string, off clockOffset) result.UDP {
	tm := newTiming()
	for _, p := range pkts {
		tm.add(p.s, p.r, p.shared)
	}
	var u result.UDP
	tm.fill(&u, &tm.iv, source, off)
	return u
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestJitter checks RFC 3550 jitter against values worked by hand.
func TestJitter(t *testing.T) {
	// Transit 10000, 10500, 10200, 11000 ns: D(i-1,i) = +500, -300, +800.
	// J = 500/16 = 31.25; 31.25 + (300-31.25)/16 = 48.046875;
	// 48.046875 + (800-48.046875)/16 = 95.0439453125 ns.
	four := []timed{{0, 10000, false}, {1000, 11500, false}, {2000, 12200, false}, {3000, 14000, false}}
	// GRO: three batches of three; only the heads (transit 10000, 10400,
	// 10100) have their own times: |D| = 400, 300; J = 25, 25+275/16.
	gro := []timed{
		{0, 10000, false}, {100, 10000, true}, {200, 10000, true},
		{1000, 11400, false}, {1100, 11400, true}, {1200, 11400, true},
		{2000, 12100, false}, {2100, 12100, true}, {2200, 12100, true},
	}
	tests := []struct {
		name        string
		pkts        []timed
		source      string
		wantJNs     float64
		wantSamples int64
		wantMethod  string
	}{
		{"four datagrams", four, "kernel", 95.0439453125, 3, "kernel timestamps"},
		{"user-space clock", four, "user-space", 95.0439453125, 3, "user-space clock"},
		{"GRO heads only", gro, "kernel", 25 + 275.0/16, 2, "kernel timestamps per GRO batch: 2 of 8 pairs"},
		{"one datagram is n/a", four[:1], "kernel", 0, 0, "kernel timestamps"},
		{"no own time is n/a", []timed{{0, 5, false}, {1, 5, true}}, "kernel", 0, 0, "kernel timestamps per GRO batch: 0 of 1 pairs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := fillTiming(tt.pkts, tt.source, clockOffset{})
			if !near(u.JitterMs, tt.wantJNs/1e6, 1e-15) {
				t.Errorf("jitter %.12f ms, want %.12f", u.JitterMs, tt.wantJNs/1e6)
			}
			if u.JitterSamples != tt.wantSamples {
				t.Errorf("samples %d, want %d", u.JitterSamples, tt.wantSamples)
			}
			if u.JitterMethod != tt.wantMethod {
				t.Errorf("method %q, want %q", u.JitterMethod, tt.wantMethod)
			}
		})
	}
}

// TestDelayVariation checks IPDV, PDV and OWD on delay patterns whose
// distributions are known exactly.
func TestDelayVariation(t *testing.T) {
	// A sawtooth: transit 100 + 10*(i mod 10) µs, 1000 datagrams 1 ms
	// apart. IPDV: 900 of +10 µs, 99 of -90 µs. PDV: 0..90 µs, 100 each.
	var saw []timed
	for i := int64(0); i < 1000; i++ {
		s := i * 1_000_000
		saw = append(saw, timed{s, s + 100_000 + 10_000*(i%10), false})
	}
	// The four-datagram case of TestJitter, with the sender's clock 9 µs
	// behind: true OWD 1.0, 1.5, 1.2, 2.0 µs.
	four := []timed{{0, 10000, false}, {1000, 11500, false}, {2000, 12200, false}, {3000, 14000, false}}
	tests := []struct {
		name     string
		pkts     []timed
		off      clockOffset
		wantIPDV result.Percentiles
		wantPDV  result.Percentiles
		wantAbs  *result.Percentiles
	}{
		{
			name:     "sawtooth",
			pkts:     saw,
			wantIPDV: result.Percentiles{Count: 999, Min: -90, Mean: (900*10 - 99*90) / 999.0, P50: 10, P90: 10, P99: 10, P999: 10, Max: 10},
			wantPDV:  result.Percentiles{Count: 1000, Min: 0, Mean: 45, P50: 40, P90: 80, P99: 90, P999: 90, Max: 90},
		},
		{
			name:     "absolute with offset",
			pkts:     four,
			off:      clockOffset{set: true, offset: 9000, errorNs: 250},
			wantIPDV: result.Percentiles{Count: 3, Min: -0.3, Mean: 1.0 / 3, P50: 0.5, P90: 0.8, P99: 0.8, P999: 0.8, Max: 0.8},
			wantPDV:  result.Percentiles{Count: 4, Min: 0, Mean: 0.425, P50: 0.2, P90: 1, P99: 1, P999: 1, Max: 1},
			wantAbs:  &result.Percentiles{Count: 4, Min: 1, Mean: 1.425, P50: 1.2, P90: 2, P99: 2, P999: 2, Max: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := fillTiming(tt.pkts, "kernel", tt.off)
			checkPercentiles(t, "IPDV", u.IPDV, &tt.wantIPDV)
			checkPercentiles(t, "PDV", u.PDV, &tt.wantPDV)
			if u.OWD == nil {
				t.Fatal("no OWD")
			}
			checkPercentiles(t, "relative OWD", &u.OWD.Relative, &tt.wantPDV)
			if u.OWD.Absolute != (tt.wantAbs != nil) {
				t.Fatalf("OWD.Absolute = %v", u.OWD.Absolute)
			}
			if tt.wantAbs != nil {
				checkPercentiles(t, "absolute OWD", u.OWD.AbsoluteUs, tt.wantAbs)
				if u.OWD.OffsetUs != 9 || u.OWD.ErrorBoundUs != 0.25 {
					t.Errorf("offset %v ± %v µs, want 9 ± 0.25", u.OWD.OffsetUs, u.OWD.ErrorBoundUs)
				}
			}
		})
	}
}

// checkPercentiles compares within the histogram precision (1/128).
func checkPercentiles(t *testing.T, what string, got, want *result.Percentiles) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil", what)
	}
	if got.Count != want.Count {
		t.Errorf("%s: count %d, want %d", what, got.Count, want.Count)
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{
		{"min", got.Min, want.Min}, {"mean", got.Mean, want.Mean}, {"p50", got.P50, want.P50},
		{"p90", got.P90, want.P90}, {"p99", got.P99, want.P99}, {"p99.9", got.P999, want.P999},
		{"max", got.Max, want.Max},
	} {
		if !near(f.got, f.want, math.Abs(f.want)/128+1e-9) {
			t.Errorf("%s %s: %v µs, want %v", what, f.name, f.got, f.want)
		}
	}
}

// TestTimingCut checks that an interval's figures cover only its own
// datagrams while the stream's cover all.
func TestTimingCut(t *testing.T) {
	tm := newTiming()
	tm.add(0, 1000, false)
	tm.add(1000, 2000, false)
	tm.cut()
	tm.add(2000, 3500, false) // D +500
	var iv, tot result.UDP
	tm.fill(&iv, &tm.iv, "kernel", clockOffset{})
	tm.cut()
	tm.fill(&tot, &tm.tot, "kernel", clockOffset{})
	if iv.JitterSamples != 1 || iv.IPDV.Count != 1 || iv.IPDV.Max != 0.5 || iv.PDV.Count != 1 {
		t.Errorf("interval: samples %d ipdv %+v pdv %+v", iv.JitterSamples, *iv.IPDV, *iv.PDV)
	}
	if tot.JitterSamples != 2 || tot.IPDV.Count != 2 || tot.PDV.Count != 3 || tot.PDV.Max != 0.5 {
		t.Errorf("total: samples %d ipdv %+v pdv %+v", tot.JitterSamples, *tot.IPDV, *tot.PDV)
	}
	if want := 500.0 / 16 / 1e6; !near(tot.JitterMs, want, 1e-15) {
		t.Errorf("jitter %v, want %v", tot.JitterMs, want)
	}
}
