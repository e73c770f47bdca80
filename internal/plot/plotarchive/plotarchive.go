// Package plotarchive maps the archive's campaigns onto figures: a
// campaign's runs pivoted over its axes (archive.Pivot, as `wireperf
// table` tabulates them) become the sweep, the heatmap or the UDPmon
// figure, so that a figure shows the table's numbers. Package plot draws
// from plain structs and never reads the archive.
package plotarchive

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/resultjson"
)

// An AxisError says the campaign cannot be drawn over the axes asked
// for; another axis, or another campaign, can.
type AxisError struct{ msg string }

func (e *AxisError) Error() string { return e.msg }

func axisErrorf(format string, args ...any) error {
	return &AxisError{fmt.Sprintf(format, args...)}
}

// axisQuantity is how a campaign axis's base-unit numbers read.
func axisQuantity(axis string) plot.Quantity {
	switch axis {
	case campaign.AxisWindow, campaign.AxisLength:
		return plot.Bytes
	case campaign.AxisTime:
		return plot.Seconds
	case campaign.AxisSpacing:
		return plot.Micros
	case campaign.AxisBitrate:
		return plot.BitRate
	}
	return plot.Number
}

// axisLabel names a campaign axis with its flag.
func axisLabel(axis string) string {
	labels := map[string]string{
		campaign.AxisWindow:     "Socket buffer (-w)",
		campaign.AxisParallel:   "Streams (-P)",
		campaign.AxisTime:       "Duration (-t)",
		campaign.AxisLength:     "Length (-l)",
		campaign.AxisBitrate:    "Target rate (-b)",
		campaign.AxisSpacing:    "Spacing",
		campaign.AxisSetMSS:     "MSS (-M)",
		campaign.AxisCongestion: "Congestion control (-C)",
		campaign.AxisDirection:  "Direction",
		campaign.AxisProto:      "Protocol",
	}
	if l, ok := labels[axis]; ok {
		return l
	}
	return axis
}

// AxisNumber is an axis value on a figure: spacing in µs, the others in
// their base units.
func AxisNumber(axis string, v float64) float64 {
	if axis == campaign.AxisSpacing {
		return v * 1e6
	}
	return v
}

// valueAxis is the figure's axis for a summary column.
func valueAxis(name string) plot.Axis {
	labels := map[string]string{
		"received_bits_per_second": "Goodput",
		"sent_bits_per_second":     "Sent rate",
		"retransmits":              "Retransmits",
		"lost_percent":             "Loss",
		"jitter_ms":                "Jitter",
		"min_rtt_ms":               "Minimum RTT",
		"mean_rtt_ms":              "Mean RTT",
		"rr_p50_us":                "RTT p50",
		"rr_p99_us":                "RTT p99",
		"probe_p50_us":             "Probe p50",
		"probe_p99_us":             "Probe p99",
		"seconds":                  "Duration",
		"sent_bytes":               "Sent",
		"received_bytes":           "Received",
	}
	a := plot.Axis{Label: labels[name]}
	if a.Label == "" {
		a.Label = name
	}
	for _, c := range archive.SummaryColumns {
		if c.Name != name {
			continue
		}
		switch c.Unit {
		case "bits/s":
			a.Quantity = plot.BitRate
		case "%":
			a.Quantity = plot.Percent
		case "ms":
			a.Quantity = plot.Millis
		case "us":
			a.Quantity = plot.Micros
		case "s":
			a.Quantity = plot.Seconds
		case "bytes":
			a.Quantity = plot.Bytes
		}
	}
	return a
}

// SweepOf maps a pivot (rows: the x axis, columns: the series) onto a
// sweep: each cell's mean with its min and max over its repetitions. Rows
// that are not numbers give an AxisError.
func SweepOf(t *archive.Table, footer plot.Footer) (plot.SweepInput, error) {
	if len(t.Cells) == 0 {
		return plot.SweepInput{}, fmt.Errorf("campaign %s has no finished runs with %s along %s", strings.TrimPrefix(footer.Subject, "campaign "), t.Value, t.RowAxis)
	}
	for _, r := range t.Rows {
		if r.Num == nil {
			return plot.SweepInput{}, axisErrorf("--x %s: %q is not a number; put the axis on --series instead", t.RowAxis, r.Label)
		}
	}
	in := plot.SweepInput{
		Title:  fmt.Sprintf("%s against %s", valueAxis(t.Value).Label, strings.ToLower(axisLabel(t.RowAxis))),
		X:      plot.Axis{Label: axisLabel(t.RowAxis), Quantity: axisQuantity(t.RowAxis)},
		Y:      valueAxis(t.Value),
		Stat:   t.Stat,
		Footer: footer,
	}
	for j, col := range t.Cols {
		name := col.Label
		if t.ColAxis != "" {
			name = t.ColAxis + " " + col.Label
		}
		s := plot.SweepSeries{Name: name}
		for i, row := range t.Rows {
			c, ok := t.Cell(i, j)
			if !ok {
				continue
			}
			s.Points = append(s.Points, plot.SweepPoint{X: AxisNumber(t.RowAxis, *row.Num), Y: c.Value, Min: c.Min, Max: c.Max, N: c.N})
		}
		in.Series = append(in.Series, s)
	}
	return in, nil
}

// HeatmapOf maps a pivot (rows: y, columns: x) onto a heatmap of means.
func HeatmapOf(t *archive.Table, footer plot.Footer) (plot.HeatmapInput, error) {
	if len(t.Cells) == 0 {
		return plot.HeatmapInput{}, fmt.Errorf("campaign %s has no finished runs with %s over %s × %s", strings.TrimPrefix(footer.Subject, "campaign "), t.Value, t.ColAxis, t.RowAxis)
	}
	in := plot.HeatmapInput{
		Title:  fmt.Sprintf("%s over %s × %s", valueAxis(t.Value).Label, t.ColAxis, t.RowAxis),
		X:      plot.Axis{Label: axisLabel(t.ColAxis), Quantity: axisQuantity(t.ColAxis)},
		Y:      plot.Axis{Label: axisLabel(t.RowAxis), Quantity: axisQuantity(t.RowAxis)},
		Value:  valueAxis(t.Value),
		Footer: footer,
	}
	values := func(axis string, as []archive.Axis) ([]float64, []string) {
		nums := make([]float64, len(as))
		var labels []string
		for i, a := range as {
			if a.Num != nil {
				nums[i] = AxisNumber(axis, *a.Num)
			} else {
				labels = make([]string, len(as))
			}
		}
		if labels != nil {
			for i, a := range as {
				labels[i] = a.Label
			}
		}
		return nums, labels
	}
	in.XValues, in.XLabels = values(t.ColAxis, t.Cols)
	in.YValues, in.YLabels = values(t.RowAxis, t.Rows)
	for i := range t.Rows {
		row := make([]float64, len(t.Cols))
		for j := range t.Cols {
			row[j] = math.NaN()
			if c, ok := t.Cell(i, j); ok {
				row[j] = c.Value
			}
		}
		in.Cells = append(in.Cells, row)
	}
	return in, nil
}

// CampaignFooter names the campaign, its hosts, its first run's date and
// the version that ran it. It sorts runs by their start.
func CampaignFooter(name string, runs []*archive.Run) plot.Footer {
	f := plot.Footer{Subject: "campaign " + name}
	seen := map[string]bool{}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.Before(runs[j].Started) })
	for _, r := range runs {
		for _, h := range []string{r.LocalHost, r.RemoteHost} {
			if h != "" && !seen[h] {
				seen[h] = true
				f.Hosts = append(f.Hosts, h)
			}
		}
		if f.Date.IsZero() && !r.Started.IsZero() {
			f.Date = r.Started
		}
		if f.Version == "" {
			f.Version = r.ToolVersion
		}
	}
	return f
}

// The UDPmon figure of a sizes × spacings campaign (`wireperf sweep HOST
// -u -l SIZES --spacing GAPS`) pivoted as `wireperf table --rows spacing
// --cols length` pivots it, one value at a time: goodput per size against
// spacing with each size's 1/t curve, loss and re-ordering below.

// UDPMonCampaignOf maps a campaign's finished runs onto the udpmon figure:
// each point is the mean over the repetitions of goodput and loss, and
// re-ordering is the mean datagrams out of order over the mean sent
// (sent bytes ÷ the size). The reference curve is the payload's bits ÷
// spacing, as the rate is goodput. A campaign without both axes gives an
// AxisError.
func UDPMonCampaignOf(runs []*archive.Run, name string, footer plot.Footer) (plot.UDPMonInput, error) {
	has := map[string]bool{}
	for _, r := range runs {
		for a := range r.Axes {
			has[a] = true
		}
	}
	for _, axis := range []string{campaign.AxisSpacing, campaign.AxisLength} {
		if !has[axis] {
			var axes []string
			for a := range has {
				axes = append(axes, a)
			}
			slices.Sort(axes)
			listed := strings.Join(axes, ", ")
			if len(axes) == 0 {
				listed = "none"
			}
			return plot.UDPMonInput{}, axisErrorf("campaign %s has no %s axis (axes: %s): plot udpmon draws a UDP sizes × spacings campaign (wireperf sweep HOST -u -l SIZES --spacing GAPS)",
				name, axis, listed)
		}
	}
	pivot := func(value string) (*archive.Table, error) {
		t, _, err := archive.Pivot(runs, campaign.AxisSpacing, campaign.AxisLength, value, archive.StatMean)
		return t, err
	}
	rate, err := pivot("received_bits_per_second")
	if err != nil {
		return plot.UDPMonInput{}, err
	}
	if len(rate.Cells) == 0 {
		return plot.UDPMonInput{}, fmt.Errorf("campaign %s has no finished runs with a goodput to draw", name)
	}
	loss, err := pivot("lost_percent")
	if err != nil {
		return plot.UDPMonInput{}, err
	}
	ooo, err := pivot("out_of_order")
	if err != nil {
		return plot.UDPMonInput{}, err
	}
	sent, err := pivot("sent_bytes")
	if err != nil {
		return plot.UDPMonInput{}, err
	}
	in := plot.UDPMonInput{Title: "UDPmon: goodput against spacing", Rate: "Goodput", Footer: footer}
	// Sizes largest first, as a udpmon -J sweep draws them.
	for j := len(rate.Cols) - 1; j >= 0; j-- {
		col := rate.Cols[j]
		if col.Num == nil || *col.Num <= 0 {
			continue
		}
		size := *col.Num
		s := plot.UDPMonSeries{Name: fmt.Sprintf("%.0f B", size), DatagramBits: size * 8}
		for i, row := range rate.Rows {
			c, ok := rate.Cell(i, j)
			if !ok || row.Num == nil {
				continue
			}
			p := plot.UDPMonPoint{SpacingUs: AxisNumber(campaign.AxisSpacing, *row.Num), BitsPerSecond: c.Value}
			if v, ok := cellAt(loss, row, col); ok {
				p.LossPercent = v
			}
			if o, ok := cellAt(ooo, row, col); ok {
				if b, ok := cellAt(sent, row, col); ok && b > 0 {
					p.ReorderedPercent = 100 * o / (b / size)
				}
			}
			s.Points = append(s.Points, p)
		}
		if len(s.Points) > 0 {
			in.Series = append(in.Series, s)
		}
	}
	return in, nil
}

// cellAt is t's value at the row and column with these axis values.
func cellAt(t *archive.Table, row, col archive.Axis) (float64, bool) {
	i := slices.IndexFunc(t.Rows, func(a archive.Axis) bool { return a.Key() == row.Key() })
	j := slices.IndexFunc(t.Cols, func(a archive.Axis) bool { return a.Key() == col.Key() })
	if i < 0 || j < 0 {
		return 0, false
	}
	c, ok := t.Cell(i, j)
	return c.Value, ok
}

// IsUDPMonCampaign says a campaign's runs sweep UDP sizes × spacings.
func IsUDPMonCampaign(runs []*archive.Run) bool {
	spacing, length := false, false
	for _, r := range runs {
		_, s := r.Axes[campaign.AxisSpacing]
		_, l := r.Axes[campaign.AxisLength]
		spacing, length = spacing || s, length || l
		if p, ok := r.Axes[campaign.AxisProto]; ok && !strings.EqualFold(p.Label, "udp") {
			return false
		}
	}
	return spacing && length
}

// StoredSweeps draws a campaign's stored udpmon sweeps (finished runs
// without axes whose document is a udpmon -J document, read whole from
// store), overlaid when there are several; it returns nil when there are
// none.
func StoredSweeps(ctx context.Context, store *archive.Store, runs []*archive.Run) (*plot.Figure, error) {
	var labels []string
	var ins []plot.UDPMonInput
	for _, r := range runs {
		if r.DocumentFormat != archive.FormatJSON || len(r.Axes) > 0 || r.State != archive.StateFinished {
			continue
		}
		full, err := store.Get(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		doc, err := resultjson.Read(bytes.NewReader(full.Document))
		if err != nil || doc.Kind != resultjson.KindUDPMon {
			continue
		}
		in, err := plot.UDPMonOf(doc.Sweep, "run "+r.ID+" of campaign "+r.Campaign)
		if err != nil {
			continue
		}
		labels, ins = append(labels, "run "+r.ID), append(ins, in)
	}
	switch len(ins) {
	case 0:
		return nil, nil
	case 1:
		return plot.UDPMon(ins[0])
	}
	return plot.CompareUDPMon(labels, ins)
}

// CampaignFigure draws kind (sweep or heatmap) of the campaign name's
// runs: value, the mean over repetitions, along the axis x, with one line
// per value of other (sweep) or other along y (heatmap). An *AxisError
// says the campaign cannot be drawn so.
func CampaignFigure(kind string, runs []*archive.Run, name, x, other, value string) (*plot.Figure, error) {
	footer := CampaignFooter(name, runs)
	if kind == "heatmap" {
		t, _, err := archive.Pivot(runs, other, x, value, archive.StatMean)
		if err != nil {
			return nil, &AxisError{err.Error()}
		}
		in, err := HeatmapOf(t, footer)
		if err != nil {
			return nil, err
		}
		return plot.Heatmap(in)
	}
	t, _, err := archive.Pivot(runs, x, other, value, archive.StatMean)
	if err != nil {
		return nil, &AxisError{err.Error()}
	}
	in, err := SweepOf(t, footer)
	if err != nil {
		return nil, err
	}
	return plot.Sweep(in)
}

// UDPMonCampaignFigure draws the campaign name as a UDPmon sweep: a sizes
// × spacings campaign over its axes (UDPMonCampaignOf), or a campaign of
// whole sweeps (wireperf udpmon --save --campaign) from their documents
// (StoredSweeps).
func UDPMonCampaignFigure(ctx context.Context, store *archive.Store, runs []*archive.Run, name string) (*plot.Figure, error) {
	if !IsUDPMonCampaign(runs) {
		if fig, err := StoredSweeps(ctx, store, runs); fig != nil || err != nil {
			return fig, err
		}
	}
	in, err := UDPMonCampaignOf(runs, name, CampaignFooter(name, runs))
	if err != nil {
		return nil, err
	}
	return plot.UDPMon(in)
}

// RunFigure draws kind (timeline, latency, load, udpmon or rrul) of one stored
// run from its -J document. A run imported from a log keeps no such
// document, and a run of another kind has another one: both are a
// *plot.DocumentError.
func RunFigure(kind string, r *archive.Run) (*plot.Figure, error) {
	subject := "run " + r.ID
	if r.Campaign != "" {
		subject += " of campaign " + r.Campaign
	}
	if r.DocumentFormat != archive.FormatJSON {
		return nil, &plot.DocumentError{Msg: fmt.Sprintf("run %s was imported from a %s log, which keeps no %s data: plot its campaign instead", r.ID, r.DocumentFormat, kind)}
	}
	doc, err := resultjson.Read(bytes.NewReader(r.Document))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if err := plot.CheckDocument(kind, doc, "run "+r.ID, "run"); err != nil {
		return nil, err
	}
	return plot.DocumentFigure(kind, doc, subject)
}
