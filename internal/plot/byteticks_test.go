package plot

import (
	"slices"
	"testing"

	gplot "gonum.org/v1/plot"
)

func labels(ticks []gplot.Tick) []string {
	var out []string
	for _, tk := range ticks {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

// A log byte axis ticks at round binary sizes, labelled as iperf prints
// them, not at powers of ten (9.77 KBytes, 97.7 KBytes, 9.54 MBytes).
func TestByteLogTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string
	}{
		{10e3, 10e6, []string{"16 KBytes", "64 KBytes", "256 KBytes", "1 MBytes", "4 MBytes"}},
		{1 << 10, 1 << 30, []string{"4 KBytes", "64 KBytes", "1 MBytes", "16 MBytes", "256 MBytes"}},
		{1 << 10, 1 << 40, []string{"1 KBytes", "1 MBytes", "1 GBytes", "1 TBytes"}},
		{1 << 12, 1 << 36, []string{"4 KBytes", "64 KBytes", "1 MBytes", "16 MBytes", "256 MBytes", "4 GBytes", "64 GBytes"}},
		{64 << 10, 512 << 10, []string{"64 KBytes", "128 KBytes", "256 KBytes", "512 KBytes"}},
		// Less than a power of two in view: the ends are labelled.
		{100e3, 120e3, []string{"97.7 KBytes", "117 KBytes"}},
	} {
		got := labels(logTicker{q: Bytes}.Ticks(c.min, c.max))
		if !slices.Equal(got, c.want) {
			t.Errorf("ticks over %g..%g bytes: %q, want %q", c.min, c.max, got, c.want)
		}
	}
}

// The timeline's cwnd panel, over three decades, is a log axis that ends
// on powers of two and is labelled at round binary sizes.
func TestTimelineCwndTicks(t *testing.T) {
	in := timelineFixture()
	in.Cwnd[0].Points = []Point{{0, 10e3}, {1, 100e3}, {2, 1e6}, {3, 10e6}}
	f, err := Timeline(in)
	mustRender(t, f, err)
	cwnd := f.Panels[1]
	if !cwnd.YLog {
		t.Fatal("cwnd over three decades: want a log axis")
	}
	y := cwnd.Plot.Y
	if y.Min != 8<<10 || y.Max != 16<<20 {
		t.Errorf("cwnd axis %g..%g, want 8 KiB..16 MiB", y.Min, y.Max)
	}
	want := []string{"16 KBytes", "64 KBytes", "256 KBytes", "1 MBytes", "4 MBytes", "16 MBytes"}
	if got := labels(y.Tick.Marker.Ticks(y.Min, y.Max)); !slices.Equal(got, want) {
		t.Errorf("cwnd ticks %q, want %q", got, want)
	}
}
