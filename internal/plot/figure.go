// Package plot draws wireperf's figures (sweep, heatmap, timeline,
// udpmon, latency, load and their comparisons) as PNG or SVG with
// gonum.org/v1/plot. Every figure is built from a plain input struct of
// this package, so a caller (a -J file, the archive) only maps its data
// onto these structs. docs/reports.md describes each figure.
package plot

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/wireperf/wireperf/internal/version"
)

// Footer names what a figure shows, printed under it: the campaign or
// run, the hosts, the date and the wireperf version that drew it.
type Footer struct {
	Subject string // e.g. "campaign seacom-grid" or "run 3f2a9c"
	Hosts   []string
	Date    time.Time
	// Version is wireperf's; empty means this build's.
	Version string
}

// String is the footer's one line.
func (f Footer) String() string {
	var parts []string
	if f.Subject != "" {
		parts = append(parts, f.Subject)
	}
	if len(f.Hosts) > 0 {
		parts = append(parts, strings.Join(f.Hosts, " → "))
	}
	if !f.Date.IsZero() {
		parts = append(parts, f.Date.UTC().Format("2006-01-02 15:04 UTC"))
	}
	v := f.Version
	if v == "" {
		v = version.String()
	}
	parts = append(parts, "wireperf "+strings.TrimPrefix(v, "wireperf "))
	return strings.Join(parts, " · ")
}

// Point is one plotted (x, y) in the data's own units (bits/s, bytes, s,
// µs), before any axis scaling.
type Point struct{ X, Y float64 }

// Series is what one line, bar set or cell grid of a panel drew: the
// values handed to the plotter after filtering, kept so that tests and
// callers can check a figure against its data.
type Series struct {
	Name   string
	Points []Point
}

// Panel is one plot of a figure with the series it drew.
type Panel struct {
	Plot   *gplot.Plot
	Series []Series
	// XLog and YLog say whether the panel's axes are logarithmic.
	XLog, YLog bool
	// key, when set, is a colour key drawn beside the panel, right of its
	// plot area (the heatmap's scale).
	key *colourKey
}

// Series returns the panel's series of that name, or nil.
func (p *Panel) Find(name string) *Series {
	for i := range p.Series {
		if p.Series[i].Name == name {
			return &p.Series[i]
		}
	}
	return nil
}

// Figure is a finished figure: panels stacked top to bottom (sharing one
// x axis when they are linked), a title, caption notes and the footer.
type Figure struct {
	Kind   string // sweep, heatmap, timeline, udpmon, latency, load
	Title  string
	Panels []*Panel
	// Notes are caption lines: what was left out and why, how to read
	// the figure.
	Notes  []string
	Footer Footer
	// Width and Height are the page size; zero means the default.
	Width, Height vg.Length
}

// Default page: 7 × 4.5 inches, 672 × 432 pixels in PNG at 96 dpi; each
// extra panel adds 1.8 inches.
const (
	defaultWidth       = 7 * vg.Inch
	defaultHeight      = 4.5 * vg.Inch
	extraPanelHeight   = 1.8 * vg.Inch
	titleSize          = 12
	captionSize        = 8
	panelGap           = 4
	marginAroundFigure = 6
)

// note adds a caption line.
func (f *Figure) note(format string, args ...any) {
	f.Notes = append(f.Notes, fmt.Sprintf(format, args...))
}

func (f *Figure) size() (vg.Length, vg.Length) {
	w, h := f.Width, f.Height
	if w == 0 {
		w = defaultWidth
	}
	if h == 0 {
		h = defaultHeight
		if n := len(f.Panels); n > 1 {
			h += vg.Length(n-1) * extraPanelHeight
		}
	}
	return w, h
}

// Format is the image format for a file name: "png" or "svg".
func Format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".png", ".svg":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("%s: the output file must end in .png or .svg", path)
	}
}

// Save writes the figure to path, as PNG or SVG by its extension.
func (f *Figure) Save(path string) (err error) {
	format, err := Format(path)
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	return f.Write(out, format)
}

// Write renders the figure in format ("png" or "svg") to w.
func (f *Figure) Write(w io.Writer, format string) error {
	if format != "png" && format != "svg" {
		return fmt.Errorf("unknown image format %q: want png or svg", format)
	}
	if len(f.Panels) == 0 {
		return fmt.Errorf("%s figure: nothing to draw", f.Kind)
	}
	width, height := f.size()
	c, err := draw.NewFormattedCanvas(width, height, format)
	if err != nil {
		return err
	}
	f.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

func textStyle(size vg.Length, clr color.Color, xa text.XAlignment) text.Style {
	return text.Style{
		Color:   clr,
		Font:    font.From(gplot.DefaultFont, size),
		XAlign:  xa,
		YAlign:  draw.YTop,
		Handler: gplot.DefaultTextHandler,
	}
}

var captionGrey = color.Gray{Y: 0x55}

// Draw draws the figure on c: the title at the top, the caption and the
// footer at the bottom, the panels aligned in between so that linked
// panels' data areas line up on one time axis.
func (f *Figure) Draw(c draw.Canvas) {
	c.FillPolygon(color.White, []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	})
	c = draw.Crop(c, marginAroundFigure, -marginAroundFigure, marginAroundFigure, -marginAroundFigure)
	top := c.Max.Y
	if f.Title != "" {
		st := textStyle(titleSize, color.Black, draw.XCenter)
		c.FillText(st, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top}, f.Title)
		top -= st.Height(f.Title) + panelGap
	}
	small := textStyle(captionSize, captionGrey, draw.XLeft)
	lines := append(append([]string{}, f.Notes...), f.Footer.String())
	lineH := small.Height("Ag")
	bottom := c.Min.Y + vg.Length(len(lines))*lineH
	for i, l := range lines {
		c.FillText(small, vg.Point{X: c.Min.X, Y: bottom - vg.Length(i)*lineH}, l)
	}
	area := draw.Crop(c, 0, 0, bottom-c.Min.Y+panelGap, top-c.Max.Y)
	var keyWidth vg.Length
	for _, p := range f.Panels {
		if p.key != nil {
			keyWidth = max(keyWidth, p.key.width())
		}
	}
	area = draw.Crop(area, 0, -keyWidth, 0, 0)
	plots := make([][]*gplot.Plot, len(f.Panels))
	for i, p := range f.Panels {
		plots[i] = []*gplot.Plot{p.Plot}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: panelGap}
	canvases := gplot.Align(plots, tiles, area)
	for i, p := range f.Panels {
		p.Plot.Draw(canvases[i][0])
		if p.key != nil {
			data := p.Plot.DataCanvas(canvases[i][0])
			p.key.draw(c, data.Rectangle, canvases[i][0].Max.X)
		}
	}
}
