package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
	"github.com/wireperf/wireperf/internal/resultjson"
)

// The archive's side of `wireperf plot`: which campaign or run, over
// which axes; package plotarchive maps them onto the figures.

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
	footer := plotarchive.CampaignFooter(f.campaign, runs)
	if kind == "heatmap" {
		t, _, err := archive.Pivot(runs, other, x, value, archive.StatMean)
		if err != nil {
			return nil, usageError{err}
		}
		in, err := plotarchive.HeatmapOf(t, footer)
		if err != nil {
			return nil, axisUsage(err)
		}
		return plot.Heatmap(in)
	}
	t, _, err := archive.Pivot(runs, x, other, value, archive.StatMean)
	if err != nil {
		return nil, usageError{err}
	}
	in, err := plotarchive.SweepOf(t, footer)
	if err != nil {
		return nil, axisUsage(err)
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

// axisUsage makes an error about a campaign's axes a usage error: other
// flags fix it.
func axisUsage(err error) error {
	var ae *plotarchive.AxisError
	if errors.As(err, &ae) {
		return usageError{err}
	}
	return err
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
