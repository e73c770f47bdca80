package plot

import (
	"image/color"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// luminance is c's relative lightness, 0 (black) to 1 (white).
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	return (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 0xffff
}

// The heatmap's map is sequential: from the lowest value to the highest
// every colour is darker than the one before, so that a magnitude reads
// by lightness (a diverging map's grey middle would not).
func TestHeatmapColoursDarkenWithValue(t *testing.T) {
	cols := sequential{}.Colors()
	for i := 1; i < len(cols); i++ {
		if luminance(cols[i]) >= luminance(cols[i-1]) {
			t.Errorf("colour %d (lightness %.3f) is not darker than colour %d (%.3f)", i, luminance(cols[i]), i-1, luminance(cols[i-1]))
		}
	}
	if lo, hi := luminance(cols[0]), luminance(cols[len(cols)-1]); lo-hi < 0.5 {
		t.Errorf("the lowest and highest values' colours differ in lightness by %.2f only", lo-hi)
	}
}

// boxOf is the bounding box of a recorded path.
func boxOf(p vg.Path) vg.Rectangle {
	r := vg.Rectangle{Min: vg.Point{X: 1e9, Y: 1e9}, Max: vg.Point{X: -1e9, Y: -1e9}}
	for _, c := range p {
		if c.Type == vg.MoveComp || c.Type == vg.LineComp {
			r.Min.X, r.Min.Y = min(r.Min.X, c.Pos.X), min(r.Min.Y, c.Pos.Y)
			r.Max.X, r.Max.Y = max(r.Max.X, c.Pos.X), max(r.Max.Y, c.Pos.Y)
		}
	}
	return r
}

func inside(in, out vg.Rectangle) bool {
	const e = 0.01
	return in.Min.X >= out.Min.X-e && in.Min.Y >= out.Min.Y-e && in.Max.X <= out.Max.X+e && in.Max.Y <= out.Max.Y+e
}

// The colour key sits right of the cells, not over them, inside the
// figure; each of its swatches, the white-ish low end and the grey of "no
// result" too, is outlined in a colour dark against the white page.
func TestHeatmapKeyBesideCellsAndVisible(t *testing.T) {
	f, err := Heatmap(heatmapFixture())
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder.Canvas
	w, h := f.size()
	f.Draw(draw.NewCanvas(&rec, w, h))
	k := f.Panels[0].key
	if k == nil {
		t.Fatal("the heatmap has no colour key")
	}
	if k.drawnAt.Min.X < k.cellsAt.Max.X {
		t.Errorf("the key (from x=%v) overlaps the cells (to x=%v)", k.drawnAt.Min.X, k.cellsAt.Max.X)
	}
	if k.drawnAt.Max.X > w {
		t.Errorf("the key ends at x=%v, past the figure's width %v", k.drawnAt.Max.X, w)
	}

	type shape struct {
		c   color.Color
		box vg.Rectangle
	}
	var fills, strokes []shape
	var cur color.Color = color.Black
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			cur = a.Color
		case *recorder.Fill:
			if b := boxOf(a.Path); inside(b, k.drawnAt) {
				fills = append(fills, shape{cur, b})
			}
		case *recorder.Stroke:
			strokes = append(strokes, shape{cur, boxOf(a.Path)})
		}
	}
	if len(fills) < 2 {
		t.Fatalf("%d swatches in the key: want the scale and no result's", len(fills))
	}
	sawNoResult := false
	for _, fl := range fills {
		sawNoResult = sawNoResult || fl.c == color.Color(noResult)
		outlined := false
		for _, st := range strokes {
			if inside(fl.box, st.box) && luminance(st.c) < 0.5 {
				outlined = true
			}
		}
		if !outlined {
			t.Errorf("swatch %v at %v has no dark outline", fl.c, fl.box)
		}
	}
	if !sawNoResult {
		t.Error("the key has no swatch for cells without a result")
	}
}
