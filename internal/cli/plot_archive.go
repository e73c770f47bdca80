package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/resultjson"
)

// The archive's side of `wireperf plot`: a campaign's runs pivoted over
// its axes (archive.Pivot, as `wireperf table` tabulates them) and mapped
// onto the sweep and heatmap figures, so that a figure shows the table's
// numbers.

// defaultPlotValue is the summary value drawn without --value.
const defaultPlotValue = "received_bits_per_second"

// campaignFigure draws kind (sweep or heatmap) of f.campaign.
func campaignFigure(ctx context.Context, kind string, f *plotFlags) (*plot.Figure, error) {
	if f.campaign == "" {
		return nil, usagef("plot %s draws a campaign: give --campaign NAME", kind)
	}
	value := f.value
	if value == "" {
		value = defaultPlotValue
	}
	if !archive.IsSummaryColumn(value) {
		var names []string
		for _, c := range archive.SummaryColumns {
			names = append(names, c.Name)
		}
		return nil, usagef("--value %q: want one of %s", value, strings.Join(names, ", "))
	}
	x, err := plotAxisFlag("--x", f.x)
	if err != nil {
		return nil, err
	}
	second, secondFlag := f.series, "--series"
	if kind == "heatmap" {
		second, secondFlag = f.y, "--y"
		if f.series != "" {
			return nil, usagef("plot heatmap takes --y AXIS, not --series")
		}
	} else if f.y != "" {
		return nil, usagef("plot sweep takes --series AXIS, not --y")
	}
	other, err := plotAxisFlag(secondFlag, second)
	if err != nil {
		return nil, err
	}
	if kind == "heatmap" && other == "" {
		return nil, usagef("plot heatmap needs --y AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
	}
	runs, err := campaignRuns(ctx, f.db, f.campaign)
	if err != nil {
		return nil, err
	}
	footer := campaignFooter(f.campaign, runs)
	if kind == "heatmap" {
		t, _, err := archive.Pivot(runs, other, x, value, archive.StatMean)
		if err != nil {
			return nil, usageError{err}
		}
		in, err := heatmapOf(t, footer)
		if err != nil {
			return nil, err
		}
		return plot.Heatmap(in)
	}
	t, _, err := archive.Pivot(runs, x, other, value, archive.StatMean)
	if err != nil {
		return nil, usageError{err}
	}
	in, err := sweepOf(t, footer)
	if err != nil {
		return nil, err
	}
	return plot.Sweep(in)
}

// campaignRuns are the stored runs of a campaign the archive must hold.
func campaignRuns(ctx context.Context, db, name string) ([]*archive.Run, error) {
	store, err := openArchiveToRead(ctx, db)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if err := requireCampaign(ctx, store, name); err != nil {
		return nil, err
	}
	return store.List(ctx, archive.Filter{Campaign: name})
}

// requireCampaign fails in one line, naming the campaigns there are,
// when the archive holds no campaign of that name.
func requireCampaign(ctx context.Context, store *archive.Store, name string) error {
	if _, err := store.GetCampaign(ctx, name); err != nil {
		names, _ := store.Campaigns(ctx)
		return usagef("no campaign %q in %s (campaigns: %s)", name, archive.Redact(store.DSN()), listOrNone(names))
	}
	return nil
}

// plotAxisFlag checks a campaign axis given to a flag; "" stays "".
func plotAxisFlag(flag, name string) (string, error) {
	if name == "" {
		if flag == "--x" {
			return "", usagef("give the axis along x with --x AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
		}
		return "", nil
	}
	a, ok := campaign.CanonicalAxis(name)
	if !ok {
		return "", usagef("%s %q: not a campaign axis (%s)", flag, name, strings.Join(campaign.AxisNames(), ", "))
	}
	return a, nil
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

// axisNumber is an axis value on the figure: spacing in µs, the others in
// their base units.
func axisNumber(axis string, v float64) float64 {
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

// sweepOf maps a pivot (rows: the x axis, columns: the series) onto a
// sweep: each cell's mean with its min and max over its repetitions.
func sweepOf(t *archive.Table, footer plot.Footer) (plot.SweepInput, error) {
	if len(t.Cells) == 0 {
		return plot.SweepInput{}, fmt.Errorf("campaign %s has no finished runs with %s along %s", strings.TrimPrefix(footer.Subject, "campaign "), t.Value, t.RowAxis)
	}
	for _, r := range t.Rows {
		if r.Num == nil {
			return plot.SweepInput{}, usagef("--x %s: %q is not a number; put the axis on --series instead", t.RowAxis, r.Label)
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
			s.Points = append(s.Points, plot.SweepPoint{X: axisNumber(t.RowAxis, *row.Num), Y: c.Value, Min: c.Min, Max: c.Max, N: c.N})
		}
		in.Series = append(in.Series, s)
	}
	return in, nil
}

// heatmapOf maps a pivot (rows: y, columns: x) onto a heatmap of means.
func heatmapOf(t *archive.Table, footer plot.Footer) (plot.HeatmapInput, error) {
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
				nums[i] = axisNumber(axis, *a.Num)
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

// campaignFooter names the campaign, its hosts, its first run's date and
// the version that ran it.
func campaignFooter(name string, runs []*archive.Run) plot.Footer {
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

// runDocument reads a stored run's -J document back, for the figures of
// one run (timeline, latency, load).
func runDocument(ctx context.Context, kind string, f *plotFlags) (*resultjson.Document, string, error) {
	store, err := openArchiveToRead(ctx, f.db)
	if err != nil {
		return nil, "", err
	}
	defer store.Close()
	r, err := store.Get(ctx, f.run)
	if err != nil {
		if errors.Is(err, archive.ErrNotFound) {
			return nil, "", usageError{err}
		}
		return nil, "", err
	}
	subject := "run " + r.ID
	if r.Campaign != "" {
		subject += " of campaign " + r.Campaign
	}
	if r.DocumentFormat != archive.FormatJSON {
		return nil, "", usagef("run %s was imported from a %s log, which keeps no %s data: plot its campaign instead", r.ID, r.DocumentFormat, kind)
	}
	doc, err := resultjson.Read(bytes.NewReader(r.Document))
	if err != nil {
		return nil, "", fmt.Errorf("run %s: %w", r.ID, err)
	}
	if want := fileKinds[kind]; doc.Kind != want {
		return nil, "", usagef("run %s is %s run; plot %s needs %s run", r.ID, describeDoc(doc.Kind), kind, describeDoc(want))
	}
	return doc, subject, nil
}
