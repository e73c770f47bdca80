package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
)

// The archive's side of `wireperf plot`: which campaign or run, over
// which axes; package plotarchive draws them.

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
	store, runs, err := campaignRuns(ctx, f.db, f.campaign)
	if err != nil {
		return nil, err
	}
	store.Close()
	return plotarchive.CampaignFigure(kind, runs, f.campaign, x, other, value)
}

// udpmonCampaignFigure draws f.campaign as a UDPmon sweep.
func udpmonCampaignFigure(ctx context.Context, f *plotFlags) (*plot.Figure, error) {
	store, runs, err := campaignRuns(ctx, f.db, f.campaign)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return plotarchive.UDPMonCampaignFigure(ctx, store, runs, f.campaign)
}

// campaignRuns opens the archive and reads the runs of a campaign it
// must hold; the caller closes the store.
func campaignRuns(ctx context.Context, db, name string) (*archive.Store, []*archive.Run, error) {
	store, err := openArchiveToRead(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	if err := requireCampaign(ctx, store, name); err != nil {
		store.Close()
		return nil, nil, err
	}
	runs, err := store.List(ctx, archive.Filter{Campaign: name})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, runs, nil
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

// plotUsage makes an error that other flags fix a usage error: a
// campaign that cannot be drawn over the axes asked for, or a document
// that is not the figure's.
func plotUsage(err error) error {
	var ae *plotarchive.AxisError
	var de *plot.DocumentError
	if errors.As(err, &ae) || errors.As(err, &de) {
		return usageError{err}
	}
	return err
}

// runFigure draws kind of the stored run f.run.
func runFigure(ctx context.Context, kind string, f *plotFlags) (*plot.Figure, error) {
	store, err := openArchiveToRead(ctx, f.db)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	r, err := store.Get(ctx, f.run)
	if errors.Is(err, archive.ErrNotFound) {
		return nil, usageError{err}
	}
	if err != nil {
		return nil, err
	}
	return plotarchive.RunFigure(kind, r)
}
