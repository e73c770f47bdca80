package cli

import (
	"context"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/plot/plotarchive"
)

// The archive's side of `wireperf plot udpmon --campaign`: a sizes ×
// spacings campaign drawn as a UDPmon sweep (plotarchive.UDPMonCampaignOf),
// or a campaign of stored udpmon sweeps drawn from their documents.

// udpmonCampaignFigure draws f.campaign as a UDPmon sweep.
func udpmonCampaignFigure(ctx context.Context, f *plotFlags) (*plot.Figure, error) {
	runs, err := campaignRuns(ctx, f.db, f.campaign)
	if err != nil {
		return nil, err
	}
	if !plotarchive.IsUDPMonCampaign(runs) {
		// A campaign of whole sweeps (wireperf udpmon --save --campaign):
		// each drawn from its document, overlaid when there are several.
		if fig, err := storedSweepsFigure(ctx, f.db, runs); fig != nil || err != nil {
			return fig, err
		}
	}
	in, err := plotarchive.UDPMonCampaignOf(runs, f.campaign, plotarchive.CampaignFooter(f.campaign, runs))
	if err != nil {
		return nil, axisUsage(err)
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
	return plotarchive.StoredSweeps(ctx, store, runs)
}
