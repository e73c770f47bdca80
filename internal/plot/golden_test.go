package plot

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "render the golden figures again into testdata/")

// goldenTolerance is the share of pixels that may differ (by more than
// goldenLevel in a channel) from the reference: font rasterising differs
// slightly between platforms, a wrong figure differs by far more.
const (
	goldenTolerance = 0.005
	goldenLevel     = 24
)

// docImages is where docs/reports.md's example figures are; each stays
// under maxDocImage bytes.
const (
	docImages   = "../../docs/images"
	maxDocImage = 100 << 10
)

func goldenFigures(t *testing.T) map[string]*Figure {
	t.Helper()
	must := func(f *Figure, err error) *Figure {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	return map[string]*Figure{
		"sweep":    must(Sweep(sweepFixture())),
		"heatmap":  must(Heatmap(heatmapFixture())),
		"timeline": must(Timeline(timelineFixture())),
		"udpmon":   must(UDPMon(udpmonFixture())),
		"latency":  must(Latency(latencyFixture())),
		"load":     must(Load(loadFixture())),
		// What `wireperf plot compare latency --from before.json --from
		// after.json` draws (docs/reports.md, "compare").
		"compare": must(CompareLatency([]string{"before", "after"}, []LatencyInput{latencyFixture(), slowerLatency(latencyFixture(), 2)})),
	}
}

func TestGolden(t *testing.T) {
	for name, f := range goldenFigures(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := f.Write(&buf, "png"); err != nil {
				t.Fatal(err)
			}
			// The reference, and the same figure as docs/reports.md shows it,
			// so the documentation's examples cannot go stale.
			for _, path := range []string{filepath.Join("testdata", name+".png"), filepath.Join(docImages, "plot-"+name+".png")} {
				if *update {
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run the test with -update to create it)", err)
				}
				share, err := pixelDifference(buf.Bytes(), want)
				if err != nil {
					t.Fatal(err)
				}
				if share > goldenTolerance {
					got := filepath.Join(t.TempDir(), name+".png")
					_ = os.WriteFile(got, buf.Bytes(), 0o644)
					t.Errorf("%s differs from %s in %.2f%% of its pixels (more than %.2f%%); rendered: %s; if the change is meant, run go test -update",
						name, path, 100*share, 100*goldenTolerance, got)
				}
				if len(want) > maxDocImage {
					t.Errorf("%s is %d KB: keep figures under %d KB", path, len(want)>>10, maxDocImage>>10)
				}
			}
		})
	}
}

// pixelDifference is the share of pixels of two PNGs that differ by more
// than goldenLevel in some channel; images of different sizes differ
// wholly.
func pixelDifference(a, b []byte) (float64, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 0, err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	if ia.Bounds() != ib.Bounds() {
		return 1, nil
	}
	return differing(ia, ib), nil
}

func differing(a, b image.Image) float64 {
	r := a.Bounds()
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if far(r1, r2) || far(g1, g2) || far(b1, b2) || far(a1, a2) {
				n++
			}
		}
	}
	return float64(n) / float64(r.Dx()*r.Dy())
}

func far(a, b uint32) bool {
	d := int(a>>8) - int(b>>8)
	return d > goldenLevel || d < -goldenLevel
}

// The tolerance itself must catch a real change: a figure with one
// series' values halved is far from the reference.
func TestGoldenCatchesChange(t *testing.T) {
	good, err := Sweep(sweepFixture())
	if err != nil {
		t.Fatal(err)
	}
	bad, err := Sweep(scaledSweep(sweepFixture(), 0.5))
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := good.Write(&a, "png"); err != nil {
		t.Fatal(err)
	}
	if err := bad.Write(&b, "png"); err != nil {
		t.Fatal(err)
	}
	share, err := pixelDifference(a.Bytes(), b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if share <= goldenTolerance {
		t.Fatalf("halving the data changed only %.3f%% of the pixels: the golden tolerance would not notice", 100*share)
	}
}

// slowerLatency is in with every RTT k times as long.
func slowerLatency(in LatencyInput, k float64) LatencyInput {
	out := in
	out.Series = nil
	for _, s := range in.Series {
		ns := LatencySeries{Name: s.Name, P50: s.P50 * k, P99: s.P99 * k, P999: s.P999 * k}
		for _, b := range s.Buckets {
			ns.Buckets = append(ns.Buckets, Bucket{From: b.From * k, To: b.To * k, Count: b.Count})
		}
		out.Series = append(out.Series, ns)
	}
	return out
}

func scaledSweep(in SweepInput, k float64) SweepInput {
	out := in
	out.Series = nil
	for _, s := range in.Series {
		ns := SweepSeries{Name: s.Name}
		for _, p := range s.Points {
			vs := make([]float64, len(p.Values))
			for i, v := range p.Values {
				vs[i] = v * k
			}
			ns.Points = append(ns.Points, SweepPoint{X: p.X, Values: vs})
		}
		out.Series = append(out.Series, ns)
	}
	return out
}
