package plot

import (
	"strings"
	"testing"
)

// Points summarised already draw their value with bars from min to max.
func TestSweepSummarisedPoints(t *testing.T) {
	in := SweepInput{
		X:      Axis{Label: "Streams", Quantity: Number},
		Y:      Axis{Label: "Goodput", Quantity: BitRate},
		Stat:   "median",
		Series: []SweepSeries{{Name: "64 KBytes", Points: []SweepPoint{{X: 1, Y: 5e8, Min: 4e8, Max: 6e8, N: 3}, {X: 4, Y: 9e8, Min: 8.5e8, Max: 9.4e8, N: 3}}}},
		Footer: testFooter,
	}
	f, err := Sweep(in)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Panels[0]
	line, lo, hi := p.Find("64 KBytes"), p.Find("64 KBytes min"), p.Find("64 KBytes max")
	if line == nil || lo == nil || hi == nil || line.Points[1] != (Point{4, 9e8}) || lo.Points[0] != (Point{1, 4e8}) || hi.Points[1] != (Point{4, 9.4e8}) {
		t.Fatalf("series %v", p.Series)
	}
	if len(f.Notes) == 0 || !strings.Contains(f.Notes[0], "median") {
		t.Fatalf("the caption should name the median: %q", f.Notes)
	}
}

func TestHeatmapWordAxis(t *testing.T) {
	in := heatmapFixture()
	in.YLabels = []string{"cubic", "bbr", "reno"}
	f, err := Heatmap(in)
	if err != nil {
		t.Fatal(err)
	}
	svg := renderSVG(t, f)
	for _, w := range in.YLabels {
		if !strings.Contains(svg, ">"+w+"<") {
			t.Errorf("the SVG lacks the axis label %q", w)
		}
	}
	if f.Panels[0].Find("bbr") == nil {
		t.Errorf("rows not named by their labels: %v", f.Panels[0].Series)
	}
}

// A sweep of windows from 16K to 1M is log-x though it spans less than
// two decades; streams 1..4 are not.
func TestSweepOfSizesIsLogX(t *testing.T) {
	in := SweepInput{
		X:      Axis{Label: "Window", Quantity: Bytes},
		Y:      Axis{Label: "Goodput", Quantity: BitRate},
		Series: []SweepSeries{{Name: "1", Points: []SweepPoint{{X: 16 << 10, Values: []float64{1e9}}, {X: 1 << 20, Values: []float64{2e9}}}}},
	}
	f, err := Sweep(in)
	if err != nil || !f.Panels[0].XLog {
		t.Fatalf("windows 16K..1M: want log x (%v)", err)
	}
	in.X = Axis{Label: "Streams", Quantity: Number}
	in.Series[0].Points[0].X, in.Series[0].Points[1].X = 1, 4
	if f, err = Sweep(in); err != nil || f.Panels[0].XLog {
		t.Fatalf("streams 1..4: want linear x (%v)", err)
	}
}
