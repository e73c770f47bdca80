package plot

import (
	"bytes"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// An RRUL run draws flent's layout: download and upload per class and
// the probes' RTT on one time axis, then the RTT's CDF idle and loaded,
// each ending at 100% of the probes; goodput in bits/s from the
// series' Mbit/s.
func TestRRULFigure(t *testing.T) {
	r := &result.RRUL{Host: "b", LoadStartSeconds: 1, LoadEndSeconds: 3, AfterSeconds: 1,
		Flows: []result.RRULFlow{
			{Class: "BE", Direction: "up", Series: []result.SeriesPoint{{T: 1.2, V: 10}, {T: 1.4, V: 12}}},
			{Class: "BE", Direction: "down", Series: []result.SeriesPoint{{T: 1.2, V: 20}, {T: 1.4, V: 22}}},
		},
		Probes: []result.RRULProbe{{Class: "EF", Series: []result.SeriesPoint{{T: 0.1, V: 19}, {T: 1.3, V: 60}}}},
		Latency: result.RRULLatency{
			IdleHistogram:   &result.Histogram{Count: 4, Buckets: []result.HistogramBucket{{From: 19000, To: 19100, Count: 3}, {From: 20000, To: 20100, Count: 1}}},
			LoadedHistogram: &result.Histogram{Count: 2, Buckets: []result.HistogramBucket{{From: 60000, To: 60100, Count: 2}}},
		},
	}
	in, err := RRULOf(r, "run x")
	if err != nil {
		t.Fatal(err)
	}
	fig, err := RRUL(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 4 {
		t.Fatalf("%d panels, want download, upload, RTT and CDF", len(fig.Panels))
	}
	if s := fig.Panels[0].Find("BE"); s == nil || s.Points[1] != (Point{1.4, 22e6}) {
		t.Errorf("download BE: %+v", s)
	}
	if s := fig.Panels[1].Find("BE"); s == nil || s.Points[0] != (Point{1.2, 10e6}) {
		t.Errorf("upload BE: %+v", s)
	}
	if s := fig.Panels[2].Find("UDP EF"); s == nil || len(s.Points) != 2 {
		t.Errorf("RTT: %+v", s)
	}
	idle, loaded := fig.Panels[3].Find("idle"), fig.Panels[3].Find("loaded")
	if idle == nil || loaded == nil || idle.Points[0] != (Point{19.1, 75}) || idle.Points[1] != (Point{20.1, 100}) || loaded.Points[0] != (Point{60.1, 100}) {
		t.Errorf("CDF idle %+v, loaded %+v", idle, loaded)
	}
	var b bytes.Buffer
	if err := fig.Write(&b, "svg"); err != nil || !bytes.Contains(b.Bytes(), []byte("<svg")) {
		t.Errorf("svg: %v, %d bytes", err, b.Len())
	}
	if _, err := RRUL(RRULInput{}); err == nil {
		t.Error("an empty run drew a figure")
	}
}
