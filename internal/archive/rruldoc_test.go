package archive

import (
	"testing"
	"time"
)

// An RRUL run's document reads as one run: both directions' goodput and
// bytes together, the loaded RTT as the rr figures, the loaded probes'
// loss, and the idle median, the increase and each direction as figures.
func TestParseRRULDocument(t *testing.T) {
	doc := []byte(`{"kind": "rrul", "rrul": {"host": "b", "started_at": "2026-12-06T22:00:00Z",
		"idle_seconds": 5, "load_seconds": 10, "after_seconds": 2,
		"up_bits_per_second": 30e6, "down_bits_per_second": 34e6,
		"flows": [{"bytes": 100, "retransmits": 3}, {"bytes": 200, "retransmits": 4}],
		"probes": [{"phases": [{"label": "idle", "sent": 500, "lost": 9}, {"label": "loaded", "sent": 1000, "lost": 10}]},
		           {"phases": [{"label": "loaded", "sent": 1000, "lost": 30}]}],
		"latency": {"idle_us": {"count": 500, "min": 19000, "mean": 19500, "p50": 19400, "p99": 22000},
		            "loaded_us": {"count": 2000, "min": 20000, "mean": 70000, "p50": 64000, "p99": 170000},
		            "increase_us": {"count": 2000, "p50": 44600, "p99": 148000}},
		"cpu": {"user_percent": 5, "system_percent": 35, "total_percent": 40}}}`)
	p, err := ParseDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Summary
	if p.RemoteHost != "b" || !p.Started.Equal(time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)) || p.Ended.Sub(p.Started) != 17*time.Second {
		t.Errorf("host %q, %v to %v", p.RemoteHost, p.Started, p.Ended)
	}
	if *m.ReceivedBps != 64e6 || *m.ReceivedBytes != 300 || *m.Retransmits != 7 || *m.Seconds != 10 {
		t.Errorf("goodput %v, bytes %v, retransmits %v, seconds %v", *m.ReceivedBps, *m.ReceivedBytes, *m.Retransmits, *m.Seconds)
	}
	if *m.RRp50us != 64000 || *m.RRp99us != 170000 || *m.MeanRTTms != 70 || *m.MinRTTms != 19 || *m.LostPercent != 2 {
		t.Errorf("rr p50 %v p99 %v, mean %v ms, min %v ms, loss %v%%", *m.RRp50us, *m.RRp99us, *m.MeanRTTms, *m.MinRTTms, *m.LostPercent)
	}
	for name, want := range map[string]float64{FigureRRULIdleP50us: 19400, FigureRRULIncreaseP50us: 44600, FigureRRULIncreaseP99us: 148000,
		FigureRRULUpBps: 30e6, FigureRRULDownBps: 34e6, FigureCPULocalTotal: 40} {
		if got, ok := m.Figures[name]; !ok || got != want {
			t.Errorf("figure %s: %v (%v), want %v", name, got, ok, want)
		}
	}
	if p.Axes["proto"].Label != "rrul" || p.Axes["direction"].Label != "bidir" || *p.Axes["parallel"].Num != 2 {
		t.Errorf("axes %+v", p.Axes)
	}
}
