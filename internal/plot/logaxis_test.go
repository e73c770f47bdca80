package plot

import (
	"strings"
	"testing"
)

// A log axis cannot show values ≤ 0 (gonum's log scale panics on them):
// each figure leaves them out, draws the rest, and says so in the
// caption, which the rendered image carries.

func mustRender(t *testing.T, f *Figure, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"png", "svg"} {
		var sb strings.Builder
		if err := f.Write(&sb, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if format == "svg" {
			return sb.String()
		}
	}
	return ""
}

func hasNote(f *Figure, svg string, parts ...string) bool {
	for _, n := range f.Notes {
		ok := strings.Contains(svg, strings.ReplaceAll(n, "'", "&#39;"))
		for _, p := range parts {
			ok = ok && strings.Contains(n, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestSweepNonPositiveOnLogAxes(t *testing.T) {
	in := sweepFixture()
	in.Series[0].Points[0].Values = []float64{0, -5, 0} // a failed point: nothing moved
	in.Series[1].Points = append(in.Series[1].Points, SweepPoint{X: 0, Values: []float64{5e8}})
	f, err := Sweep(in)
	svg := mustRender(t, f, err)
	if !f.Panels[0].XLog || !f.Panels[0].YLog {
		t.Fatal("want both axes log")
	}
	if !hasNote(f, svg, "left out", "≤ 0", "-t 10s", "-t 60s") {
		t.Fatalf("no caption saying what was left out: %q", f.Notes)
	}
	for _, s := range f.Panels[0].Series {
		for _, p := range s.Points {
			if p.X <= 0 || p.Y <= 0 {
				t.Fatalf("series %q plotted %v on log axes", s.Name, p)
			}
		}
	}
}

func TestLatencyZeroBucketOnLogAxis(t *testing.T) {
	in := latencyFixture()
	in.Series[0].Buckets = append([]Bucket{{From: 0, To: 0, Count: 5}}, in.Series[0].Buckets...)
	f, err := Latency(in)
	svg := mustRender(t, f, err)
	if !f.Panels[0].XLog {
		t.Fatal("RTT from 100 µs to 20 ms: want a log x axis")
	}
	if !hasNote(f, svg, "1 point(s)", "RTT ≤ 0") {
		t.Fatalf("no caption for the 0 µs bucket: %q", f.Notes)
	}
}

func TestTimelineZeroRTTOnLogAxis(t *testing.T) {
	in := timelineFixture()
	// A bufferbloated RTT from 0.5 to 400 ms, with a zero sample (TCP_INFO
	// before the first ACK).
	in.RTT[0].Points = []Point{{0, 0}, {1, 0.5}, {2, 40}, {3, 400}}
	f, err := Timeline(in)
	svg := mustRender(t, f, err)
	rtt := f.Panels[2]
	if !rtt.YLog {
		t.Fatal("RTT over three decades: want a log axis")
	}
	if got := rtt.Find("stream 1"); got == nil || len(got.Points) != 3 {
		t.Fatalf("want the 3 positive samples plotted, got %v", got)
	}
	if !hasNote(f, svg, "1 point(s)", "RTT ≤ 0", "stream 1") {
		t.Fatalf("no caption for the zero RTT: %q", f.Notes)
	}
}

func TestUDPMonZeroSpacingOnLogAxis(t *testing.T) {
	in := udpmonFixture()
	for i := range in.Series {
		for k := range in.Series[i].Points {
			in.Series[i].Points[k].SpacingUs *= in.Series[i].Points[k].SpacingUs // 0..1600 µs: decades
		}
	}
	f, err := UDPMon(in)
	svg := mustRender(t, f, err)
	if !f.Panels[0].XLog {
		t.Fatal("spacing 16..1600 µs: want a log x axis")
	}
	if !hasNote(f, svg, "Spacing ≤ 0") {
		t.Fatalf("no caption for the back-to-back (0 µs) points: %q", f.Notes)
	}
}

func TestAllValuesNonPositive(t *testing.T) {
	in := SweepInput{
		X:      Axis{Label: "Window", Quantity: Bytes, Scale: Log},
		Y:      Axis{Label: "Goodput", Quantity: BitRate, Scale: Log},
		Series: []SweepSeries{{Name: "dead", Points: []SweepPoint{{X: 0, Values: []float64{0}}}}},
		Footer: testFooter,
	}
	f, err := Sweep(in)
	svg := mustRender(t, f, err)
	if !hasNote(f, svg, "left out") {
		t.Fatalf("no caption: %q", f.Notes)
	}
}

func TestLoadZeroPercentile(t *testing.T) {
	in := loadFixture()
	in.Phases[0].P50 = 0 // unknown
	in.RTT[0].Points[0].Y = -1
	in.RTT[0].Points = append(in.RTT[0].Points, Point{15, 8000}) // decades: log
	f, err := Load(in)
	svg := mustRender(t, f, err)
	if !f.Panels[0].YLog {
		t.Fatal("RTT 40 ms..8 s: want a log axis")
	}
	if !hasNote(f, svg, "RTT ≤ 0") {
		t.Fatalf("no caption: %q", f.Notes)
	}
}

func TestEmptyInputsFail(t *testing.T) {
	if _, err := Sweep(SweepInput{}); err == nil {
		t.Error("an empty sweep drew")
	}
	if _, err := Heatmap(HeatmapInput{}); err == nil {
		t.Error("an empty heatmap drew")
	}
	if _, err := Heatmap(HeatmapInput{XValues: []float64{1}, YValues: []float64{1}, Cells: [][]float64{{1, 2}}}); err == nil {
		t.Error("a heatmap with a ragged row drew")
	}
	if _, err := Timeline(TimelineInput{}); err == nil {
		t.Error("an empty timeline drew")
	}
	if _, err := Latency(LatencyInput{Series: []LatencySeries{{Name: "x"}}}); err == nil {
		t.Error("a latency figure with no buckets drew")
	}
	if _, err := Load(LoadInput{}); err == nil {
		t.Error("an empty load figure drew")
	}
	if _, err := UDPMon(UDPMonInput{}); err == nil {
		t.Error("an empty udpmon figure drew")
	}
	if _, err := CompareSweeps([]string{"a"}, []SweepInput{sweepFixture()}); err == nil {
		t.Error("a comparison of one drew")
	}
	if _, err := Format("x.pdf"); err == nil {
		t.Error("x.pdf accepted")
	}
}
