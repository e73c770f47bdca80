package plotarchive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/plot"
)

// Kinds are the figures `wireperf plot` draws, in the order its help
// lists them.
var Kinds = []string{"sweep", "heatmap", "timeline", "udpmon", "latency", "load", "rrul", "probes", "compare"}

// DefaultValue is the summary value a campaign's figure draws when none
// is asked for.
const DefaultValue = "received_bits_per_second"

// A Request is what `wireperf plot` is asked to draw, and from what: -J
// files, a stored run, or a stored campaign over its axes. Check it,
// open the archive when it needs one, then Draw it.
type Request struct {
	Kind   string
	Args   []string // after the kind: the figure compare overlays
	Output string   // the image's file, whose extension picks the format
	Title  string   // the figure's title; "": what the run was

	From          []string // -J files
	Run, Campaign string   // from the archive
	// A campaign's axes and value (sweep, heatmap).
	Value, X, Y, Series string
	// The probe runs drawn (probes): those touching Host, started at or
	// after Since; zero values pick all.
	Host  string
	Since time.Time

	checked         bool
	source          source
	x, other, value string // a campaign's axes and value, checked
}

// source is where a checked request's figure comes from.
type source int

const (
	fromFiles source = iota
	fromCompare
	fromRun
	fromCampaign       // sweep, heatmap
	fromUDPMonCampaign // udpmon --campaign
	fromProbes         // probes: runs picked by host, time and campaign
)

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

// Check checks the request before anything is read, and chooses where
// its figure comes from. Its errors are *RequestError.
func (r *Request) Check() error {
	kind := r.Kind
	if !slices.Contains(Kinds, kind) {
		return requestErrorf("plot %s: unknown figure; choose one of %s", kind, strings.Join(Kinds, ", "))
	}
	if r.Output == "" {
		return requestErrorf("plot %s: say where to write the figure with -o FILE.png or -o FILE.svg", kind)
	}
	if _, err := plot.Format(r.Output); err != nil {
		return &RequestError{err}
	}
	campaignKind := kind == "sweep" || kind == "heatmap"
	switch {
	case (r.Host != "" || !r.Since.IsZero()) && kind != "probes":
		return requestErrorf("plot %s: --host and --since pick the runs of plot probes", kind)
	case kind == "probes":
		if len(r.Args) > 0 || len(r.From) > 0 || r.Run != "" || r.Value != "" || r.X != "" || r.Y != "" || r.Series != "" {
			return requestErrorf("plot probes draws the archive's ping and tcp-connect runs over time: pick them with --host, --since or --campaign")
		}
		r.source = fromProbes
	case kind != "compare" && len(r.Args) > 0:
		return requestErrorf("plot %s takes no arguments after KIND (got %q)", kind, r.Args)
	case (r.Value != "" || r.X != "" || r.Y != "" || r.Series != "") && !campaignKind:
		return requestErrorf("plot %s: --value, --x, --y and --series choose a campaign's axes for sweep and heatmap", kind)
	case campaignKind:
		if len(r.From) > 0 || r.Run != "" {
			return requestErrorf("plot %s draws a campaign from the archive: give --campaign NAME, not --from or --run", kind)
		}
		if err := r.checkCampaign(); err != nil {
			return err
		}
		r.source = fromCampaign
	case kind == "compare":
		if len(r.Args) != 1 || !slices.Contains(plot.Comparable, r.Args[0]) {
			return requestErrorf("plot compare needs the figure to compare: one of %s", strings.Join(plot.Comparable, ", "))
		}
		if len(r.From) < 2 {
			return requestErrorf("plot compare %s: give two or more --from FILE", r.Args[0])
		}
		r.source = fromCompare
	case kind == "udpmon" && r.Campaign != "":
		if len(r.From) > 0 || r.Run != "" {
			return requestErrorf("plot udpmon: give --campaign NAME, --run ID or --from FILE, one of them")
		}
		r.source = fromUDPMonCampaign
	case r.Run != "":
		if len(r.From) > 0 || r.Campaign != "" {
			return requestErrorf("plot %s: give --run ID or --from FILE, not both", kind)
		}
		r.source = fromRun
	case r.Campaign != "":
		return requestErrorf("plot %s draws one run: give --run ID (or --from FILE); --campaign is for sweep, heatmap and udpmon", kind)
	default:
		if len(r.From) != 1 {
			return requestErrorf("plot %s: give one --from FILE (wireperf's -J output) or --run ID", kind)
		}
		r.source = fromFiles
	}
	r.checked = true
	return nil
}

// FromArchive says the checked request's figure is drawn from the
// archive: Draw needs its store, which must hold the request's Campaign
// when one is named.
func (r *Request) FromArchive() bool {
	return r.source == fromRun || r.source == fromCampaign || r.source == fromUDPMonCampaign || r.source == fromProbes
}

// Draw draws the checked request's figure, with the request's title:
// from store when FromArchive says (else store is unused and may be
// nil).
func (r *Request) Draw(ctx context.Context, store *archive.Store) (*plot.Figure, error) {
	if !r.checked {
		return nil, errors.New("plotarchive: Draw before Check")
	}
	var fig *plot.Figure
	var err error
	switch r.source {
	case fromCampaign:
		fig, err = r.campaignFigure(ctx, store)
	case fromUDPMonCampaign:
		fig, err = r.udpmonCampaignFigure(ctx, store)
	case fromRun:
		fig, err = r.runFigure(ctx, store)
	case fromProbes:
		fig, err = r.probesFigure(ctx, store)
	case fromCompare:
		fig, err = plot.CompareFiles(r.Args[0], r.From)
	default:
		fig, err = plot.FileFigure(r.Kind, r.From[0])
	}
	if err != nil {
		return nil, err
	}
	if r.Title != "" {
		fig.Title = r.Title
	}
	return fig, nil
}

// checkCampaign checks a campaign figure's campaign, value and axes.
func (r *Request) checkCampaign() error {
	if r.Campaign == "" {
		return requestErrorf("plot %s draws a campaign: give --campaign NAME", r.Kind)
	}
	r.value = r.Value
	if r.value == "" {
		r.value = DefaultValue
	}
	if !archive.IsSummaryColumn(r.value) {
		var names []string
		for _, c := range archive.SummaryColumns {
			names = append(names, c.Name)
		}
		return requestErrorf("--value %q: want one of %s", r.value, strings.Join(names, ", "))
	}
	var err error
	if r.x, err = axisFlag("--x", r.X); err != nil {
		return err
	}
	second, secondFlag := r.Series, "--series"
	if r.Kind == "heatmap" {
		second, secondFlag = r.Y, "--y"
		if r.Series != "" {
			return requestErrorf("plot heatmap takes --y AXIS, not --series")
		}
	} else if r.Y != "" {
		return requestErrorf("plot sweep takes --series AXIS, not --y")
	}
	if r.other, err = axisFlag(secondFlag, second); err != nil {
		return err
	}
	if r.Kind == "heatmap" && r.other == "" {
		return requestErrorf("plot heatmap needs --y AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
	}
	return nil
}

// campaignFigure draws the sweep or the heatmap of the campaign.
func (r *Request) campaignFigure(ctx context.Context, store *archive.Store) (*plot.Figure, error) {
	runs, err := store.List(ctx, archive.Filter{Campaign: r.Campaign})
	if err != nil {
		return nil, err
	}
	return CampaignFigure(r.Kind, runs, r.Campaign, r.x, r.other, r.value)
}

// udpmonCampaignFigure draws the campaign as a UDPmon sweep.
func (r *Request) udpmonCampaignFigure(ctx context.Context, store *archive.Store) (*plot.Figure, error) {
	runs, err := store.List(ctx, archive.Filter{Campaign: r.Campaign})
	if err != nil {
		return nil, err
	}
	return UDPMonCampaignFigure(ctx, store, runs, r.Campaign)
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

// probesFigure draws the probe runs the request picks.
func (r *Request) probesFigure(ctx context.Context, store *archive.Store) (*plot.Figure, error) {
	runs, err := store.List(ctx, archive.Filter{Campaign: r.Campaign, Host: r.Host, Since: r.Since})
	if err != nil {
		return nil, err
	}
	in, err := ProbesOf(runs, plot.Footer{Subject: ProbesSubject(r.Host, r.Campaign, r.Since)})
	if err != nil {
		return nil, err
	}
	return plot.Probes(in)
}

// runFigure draws the stored run.
func (r *Request) runFigure(ctx context.Context, store *archive.Store) (*plot.Figure, error) {
	run, err := store.Get(ctx, r.Run)
	if errors.Is(err, archive.ErrNotFound) {
		return nil, &RequestError{err}
	}
	if err != nil {
		return nil, err
	}
	return RunFigure(r.Kind, run)
}
