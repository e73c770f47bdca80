package plot

import (
	"strings"
	"testing"
)

func TestCompareOverlaysOnSharedAxes(t *testing.T) {
	a, b := sweepFixture(), scaledSweep(sweepFixture(), 0.01)
	b.Footer.Subject = "campaign lab-grid-2"
	f, err := CompareSweeps([]string{"before", "after"}, []SweepInput{a, b})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Panels[0]
	if p.Find("before: -t 10s") == nil || p.Find("after: -t 60s") == nil {
		t.Fatalf("series not labelled by input: %v", p.Series)
	}
	// The y axis covers both inputs: the smallest of "after" and the
	// largest of "before".
	lo, hi := b.Series[0].Points[0].Values[0], a.Series[1].Points[5].Values[2]
	if p.Plot.Y.Min > lo || p.Plot.Y.Max < hi {
		t.Fatalf("y axis %g..%g does not cover %g..%g", p.Plot.Y.Min, p.Plot.Y.Max, lo, hi)
	}
	if got := f.Footer.String(); !strings.Contains(got, "compare before (campaign lab-grid) vs after (campaign lab-grid-2)") {
		t.Fatalf("footer %q", got)
	}

	tf, err := CompareTimelines([]string{"a", "b"}, []TimelineInput{timelineFixture(), timelineFixture()})
	if err != nil {
		t.Fatal(err)
	}
	if len(tf.Panels) != 4 || tf.Panels[2].Find("a: stream 1") == nil || tf.Panels[2].Find("b: stream 1") == nil {
		t.Fatalf("timeline comparison: %d panels", len(tf.Panels))
	}
	lf, err := CompareLatency([]string{"a", "b"}, []LatencyInput{latencyFixture(), latencyFixture()})
	if err != nil || lf.Panels[1].Find("b: 64 B") == nil {
		t.Fatalf("latency comparison: %v", err)
	}
	uf, err := CompareUDPMon([]string{"a", "b"}, []UDPMonInput{udpmonFixture(), udpmonFixture()})
	if err != nil || uf.Panels[1].Find("b: 512 B loss") == nil {
		t.Fatalf("udpmon comparison: %v", err)
	}
}
