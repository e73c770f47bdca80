package plotarchive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
)

// Kinds are the figures `wireperf plot` draws, in the order its help
// lists them.
var Kinds = []string{"sweep", "heatmap", "timeline", "udpmon", "latency", "load", "compare"}

// DefaultValue is the summary value a campaign's figure draws when none
// is asked for.
const DefaultValue = "received_bits_per_second"

// A Request is what `wireperf plot` is asked to draw, and from what: -J
// files, a stored run, or a stored campaign over its axes.
type Request struct {
	Kind   string
	Args   []string // after the kind: the figure compare overlays
	Output string   // the image's file, whose extension picks the format
	Title  string   // the figure's title; "": what the run was

	From          []string // -J files
	Run, Campaign string   // from the archive
	// A campaign's axes and value (sweep, heatmap).
	Value, X, Y, Series string

	// Open opens the archive to read; the figure closes it.
	Open func(ctx context.Context) (*archive.Store, error)
	// RequireCampaign fails when the archive holds no campaign name.
	RequireCampaign func(ctx context.Context, store *archive.Store, name string) error
}

// A RequestError says the request cannot be drawn as asked: other flags
// fix it.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func requestErrorf(format string, args ...any) error {
	return &RequestError{fmt.Errorf(format, args...)}
}

// IsUsage says another request would not fail so: a *RequestError, a
// campaign that cannot be drawn over the axes asked for (*AxisError), or
// a document that is not the figure's (*plot.DocumentError).
func IsUsage(err error) bool {
	var re *RequestError
	var ae *AxisError
	var de *plot.DocumentError
	return errors.As(err, &re) || errors.As(err, &ae) || errors.As(err, &de)
}

// Draw chooses the figure the request asks for, from the files, the run
// or the campaign it names, and draws it with the request's title.
func Draw(ctx context.Context, r Request) (*plot.Figure, error) {
	fig, err := r.figure(ctx)
	if err != nil {
		return nil, err
	}
	if r.Title != "" {
		fig.Title = r.Title
	}
	return fig, nil
}

func (r Request) figure(ctx context.Context) (*plot.Figure, error) {
	kind := r.Kind
	if !slices.Contains(Kinds, kind) {
		return nil, requestErrorf("plot %s: unknown figure; choose one of %s", kind, strings.Join(Kinds, ", "))
	}
	if r.Output == "" {
		return nil, requestErrorf("plot %s: say where to write the figure with -o FILE.png or -o FILE.svg", kind)
	}
	if _, err := plot.Format(r.Output); err != nil {
		return nil, &RequestError{err}
	}
	campaignKind := kind == "sweep" || kind == "heatmap"
	switch {
	case kind != "compare" && len(r.Args) > 0:
		return nil, requestErrorf("plot %s takes no arguments after KIND (got %q)", kind, r.Args)
	case (r.Value != "" || r.X != "" || r.Y != "" || r.Series != "") && !campaignKind:
		return nil, requestErrorf("plot %s: --value, --x, --y and --series choose a campaign's axes for sweep and heatmap", kind)
	case campaignKind:
		if len(r.From) > 0 || r.Run != "" {
			return nil, requestErrorf("plot %s draws a campaign from the archive: give --campaign NAME, not --from or --run", kind)
		}
		return r.campaignFigure(ctx)
	case kind == "compare":
		if len(r.Args) != 1 || !slices.Contains(plot.Comparable, r.Args[0]) {
			return nil, requestErrorf("plot compare needs the figure to compare: one of %s", strings.Join(plot.Comparable, ", "))
		}
		if len(r.From) < 2 {
			return nil, requestErrorf("plot compare %s: give two or more --from FILE", r.Args[0])
		}
		return plot.CompareFiles(r.Args[0], r.From)
	case kind == "udpmon" && r.Campaign != "":
		if len(r.From) > 0 || r.Run != "" {
			return nil, requestErrorf("plot udpmon: give --campaign NAME, --run ID or --from FILE, one of them")
		}
		return r.udpmonCampaignFigure(ctx)
	case r.Run != "":
		if len(r.From) > 0 || r.Campaign != "" {
			return nil, requestErrorf("plot %s: give --run ID or --from FILE, not both", kind)
		}
		return r.runFigure(ctx)
	case r.Campaign != "":
		return nil, requestErrorf("plot %s draws one run: give --run ID (or --from FILE); --campaign is for sweep, heatmap and udpmon", kind)
	}
	if len(r.From) != 1 {
		return nil, requestErrorf("plot %s: give one --from FILE (wireperf's -J output) or --run ID", kind)
	}
	return plot.FileFigure(kind, r.From[0])
}

// campaignFigure draws the sweep or the heatmap of the campaign.
func (r Request) campaignFigure(ctx context.Context) (*plot.Figure, error) {
	if r.Campaign == "" {
		return nil, requestErrorf("plot %s draws a campaign: give --campaign NAME", r.Kind)
	}
	value := r.Value
	if value == "" {
		value = DefaultValue
	}
	if !archive.IsSummaryColumn(value) {
		var names []string
		for _, c := range archive.SummaryColumns {
			names = append(names, c.Name)
		}
		return nil, requestErrorf("--value %q: want one of %s", value, strings.Join(names, ", "))
	}
	x, err := axisFlag("--x", r.X)
	if err != nil {
		return nil, err
	}
	second, secondFlag := r.Series, "--series"
	if r.Kind == "heatmap" {
		second, secondFlag = r.Y, "--y"
		if r.Series != "" {
			return nil, requestErrorf("plot heatmap takes --y AXIS, not --series")
		}
	} else if r.Y != "" {
		return nil, requestErrorf("plot sweep takes --series AXIS, not --y")
	}
	other, err := axisFlag(secondFlag, second)
	if err != nil {
		return nil, err
	}
	if r.Kind == "heatmap" && other == "" {
		return nil, requestErrorf("plot heatmap needs --y AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
	}
	store, runs, err := r.campaignRuns(ctx)
	if err != nil {
		return nil, err
	}
	store.Close()
	return CampaignFigure(r.Kind, runs, r.Campaign, x, other, value)
}

// udpmonCampaignFigure draws the campaign as a UDPmon sweep.
func (r Request) udpmonCampaignFigure(ctx context.Context) (*plot.Figure, error) {
	store, runs, err := r.campaignRuns(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return UDPMonCampaignFigure(ctx, store, runs, r.Campaign)
}

// campaignRuns opens the archive and reads the runs of the campaign,
// which it must hold; the caller closes the store.
func (r Request) campaignRuns(ctx context.Context) (*archive.Store, []*archive.Run, error) {
	store, err := r.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := r.RequireCampaign(ctx, store, r.Campaign); err != nil {
		store.Close()
		return nil, nil, err
	}
	runs, err := store.List(ctx, archive.Filter{Campaign: r.Campaign})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return store, runs, nil
}

// axisFlag checks a campaign axis given to a flag; "" stays "".
func axisFlag(flag, name string) (string, error) {
	if name == "" {
		if flag == "--x" {
			return "", requestErrorf("give the axis along x with --x AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
		}
		return "", nil
	}
	a, ok := campaign.CanonicalAxis(name)
	if !ok {
		return "", requestErrorf("%s %q: not a campaign axis (%s)", flag, name, strings.Join(campaign.AxisNames(), ", "))
	}
	return a, nil
}

// runFigure draws the stored run.
func (r Request) runFigure(ctx context.Context) (*plot.Figure, error) {
	store, err := r.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	run, err := store.Get(ctx, r.Run)
	if errors.Is(err, archive.ErrNotFound) {
		return nil, &RequestError{err}
	}
	if err != nil {
		return nil, err
	}
	return RunFigure(r.Kind, run)
}
