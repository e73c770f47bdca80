package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/resultjson"
)

// The archive's side of `wireperf plot udpmon --campaign`: a sizes ×
// spacings campaign (`wireperf sweep HOST -u -l SIZES --spacing GAPS`)
// pivoted as `wireperf table --rows spacing --cols length` pivots it, one
// value at a time, and drawn as a UDPmon sweep: goodput per size against
// spacing with each size's 1/t curve, loss and re-ordering below.

// udpmonCampaignOf maps a campaign's finished runs onto the udpmon figure:
// each point is the mean over the repetitions of goodput and loss, and
// re-ordering is the mean datagrams out of order over the mean sent
// (sent bytes ÷ the size). The reference curve is the payload's bits ÷
// spacing, as the rate is goodput.
func udpmonCampaignOf(runs []*archive.Run, name string, footer plot.Footer) (plot.UDPMonInput, error) {
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
			return plot.UDPMonInput{}, usagef("campaign %s has no %s axis (axes: %s): plot udpmon draws a UDP sizes × spacings campaign (wireperf sweep HOST -u -l SIZES --spacing GAPS)",
				name, axis, listOrNone(sortedStrings(axes)))
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
			p := plot.UDPMonPoint{SpacingUs: axisNumber(campaign.AxisSpacing, *row.Num), BitsPerSecond: c.Value}
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

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// udpmonCampaignFigure draws f.campaign as a UDPmon sweep.
func udpmonCampaignFigure(ctx context.Context, f *plotFlags) (*plot.Figure, error) {
	runs, err := campaignRuns(ctx, f.db, f.campaign)
	if err != nil {
		return nil, err
	}
	if !isUDPMonCampaign(runs) {
		// A campaign of whole sweeps (wireperf udpmon --save --campaign):
		// each drawn from its document, overlaid when there are several.
		if fig, err := storedSweepsFigure(ctx, f.db, runs); fig != nil || err != nil {
			return fig, err
		}
	}
	in, err := udpmonCampaignOf(runs, f.campaign, campaignFooter(f.campaign, runs))
	if err != nil {
		return nil, err
	}
	return plot.UDPMon(in)
}

// storedSweepsFigure draws the campaign's stored udpmon sweeps (runs whose
// document is a udpmon -J document), or returns nil when it has none.
func storedSweepsFigure(ctx context.Context, db string, runs []*archive.Run) (*plot.Figure, error) {
	store, err := openArchiveToRead(ctx, db)
	if err != nil {
		return nil, err
	}
	defer store.Close()
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

// isUDPMonCampaign says a campaign's runs sweep UDP sizes × spacings.
func isUDPMonCampaign(runs []*archive.Run) bool {
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
