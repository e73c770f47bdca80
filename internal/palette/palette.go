// Package palette is the colours that series are drawn in, series i in
// Series[i mod len], shared by the static figures (internal/plot) and the
// report's interactive charts (internal/report) so that a series has one
// colour in both. It imports only the standard library, so that report
// stays free of the plotting packages.
package palette

import (
	"fmt"
	"image/color"
)

// Series is the cycle of series colours as "#rrggbb": gonum's soft
// colours, which the static figures have always used.
var Series = []string{
	"#f15a60", // red
	"#7ac36a", // green
	"#5a9bd4", // blue
	"#faa75b", // orange
	"#9e67ab", // purple
	"#ce7058", // brown
	"#d77fb4", // pink
}

// Hex is series i's colour as "#rrggbb".
func Hex(i int) string {
	n := len(Series)
	return Series[(i%n+n)%n]
}

// Color is series i's colour.
func Color(i int) color.Color {
	c, err := Parse(Hex(i))
	if err != nil {
		panic(err) // unreachable: Series holds valid colours, as a test checks
	}
	return c
}

// Parse reads a "#rrggbb" colour.
func Parse(hex string) (color.RGBA, error) {
	var c color.RGBA
	if len(hex) != 7 || hex[0] != '#' {
		return c, fmt.Errorf("palette: %q is not #rrggbb", hex)
	}
	if _, err := fmt.Sscanf(hex[1:], "%02x%02x%02x", &c.R, &c.G, &c.B); err != nil {
		return c, fmt.Errorf("palette: %q is not #rrggbb", hex)
	}
	c.A = 0xff
	return c, nil
}
