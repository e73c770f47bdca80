package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/flagvalue"
)

// selectFlags pick runs from the archive: shared by runs and table.
type selectFlags struct {
	db       string
	campaign string
	since    time.Duration
	host     string
	where    []string
}

func (s *selectFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	dbFlag(cmd, &s.db)
	fs.StringVar(&s.campaign, "campaign", "", "only this campaign's runs")
	fs.Var(flagvalue.Duration(&s.since), "since", "only runs started this long ago or less, e.g. 24h")
	fs.StringVar(&s.host, "host", "", "only runs whose local or remote host name contains this")
	fs.StringArrayVar(&s.where, "where", nil, "only runs where KEY=VALUE: source, state, or an axis (window=1M); repeatable")
}

// filter turns the flags into the archive's filter, and the --where
// conditions on axes into a test on each run.
func (s *selectFlags) filter(now time.Time) (archive.Filter, func(*archive.Run) bool, error) {
	f := archive.Filter{Campaign: s.campaign, Host: s.host}
	if s.since > 0 {
		f.Since = now.Add(-s.since)
	}
	type cond struct {
		axis string
		key  string
	}
	var conds []cond
	for _, w := range s.where {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return f, nil, usagef("--where %q: want KEY=VALUE", w)
		}
		switch k {
		case "source":
			f.Source = v
		case "state":
			f.State = v
		case "campaign":
			f.Campaign = v
		case "host":
			f.Host = v
		default:
			axis, known := campaign.CanonicalAxis(k)
			if !known {
				return f, nil, usagef("--where %q: want source, state, campaign, host or an axis (%s)", w, strings.Join(campaign.AxisNames(), ", "))
			}
			val, err := campaign.ParseValue(axis, v)
			if err != nil {
				return f, nil, usagef("--where %q: %v", w, err)
			}
			conds = append(conds, cond{axis, val.Key()})
		}
	}
	keep := func(r *archive.Run) bool {
		for _, c := range conds {
			a, ok := r.Axes[c.axis]
			if !ok || a.Key() != c.key {
				return false
			}
		}
		return true
	}
	return f, keep, nil
}

func newRunsCmd(e env) *cobra.Command {
	var sel selectFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs stored in the archive, one line each",
		Example: `  wireperf runs --campaign grid
  wireperf runs --since 24h --host lab-b -J
  wireperf runs --where source=iperf2-text`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, keep, err := sel.filter(time.Now())
			if err != nil {
				return err
			}
			store, err := openArchiveToRead(cmd.Context(), sel.db)
			if err != nil {
				return err
			}
			defer store.Close()
			all, err := store.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			var runs []*archive.Run
			for _, r := range all {
				if keep(r) {
					runs = append(runs, r)
				}
			}
			if asJSON {
				return writeRunsJSON(e.stdout, runs)
			}
			writeRunsText(e.stdout, runs)
			return nil
		},
	}
	sel.register(cmd)
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "a JSON array of runs")
	return cmd
}

// runJSON is one run in `runs -J`.
type runJSON struct {
	ID         string             `json:"id"`
	Campaign   *string            `json:"campaign"`
	Source     string             `json:"source"`
	SourceFile string             `json:"source_file,omitempty"`
	Axes       map[string]any     `json:"axes"`
	Start      *time.Time         `json:"start"`
	End        *time.Time         `json:"end,omitempty"`
	State      string             `json:"state"`
	Error      string             `json:"error,omitempty"`
	Rep        int                `json:"rep,omitempty"`
	LocalHost  string             `json:"local_host,omitempty"`
	RemoteHost string             `json:"remote_host,omitempty"`
	Rounded    bool               `json:"rounded,omitempty"`
	Summary    map[string]float64 `json:"summary"`
}

// axesJSON gives each axis its number in base units, or its word.
func axesJSON(axes map[string]archive.Axis) map[string]any {
	out := map[string]any{}
	for k, a := range axes {
		if a.Num != nil {
			out[k] = *a.Num
		} else {
			out[k] = a.Label
		}
	}
	return out
}

func writeRunsJSON(w io.Writer, runs []*archive.Run) error {
	out := make([]runJSON, 0, len(runs))
	for _, r := range runs {
		j := runJSON{ID: r.ID, Source: r.Source, SourceFile: r.SourceFile, Axes: axesJSON(r.Axes), State: r.State,
			Error: r.Error, Rep: r.Rep, LocalHost: r.LocalHost, RemoteHost: r.RemoteHost, Rounded: r.Rounded,
			Summary: r.Summary.Values()}
		if r.Campaign != "" {
			c := r.Campaign
			j.Campaign = &c
		}
		if !r.Started.IsZero() {
			t := r.Started.UTC()
			j.Start = &t
		}
		if !r.Ended.IsZero() {
			t := r.Ended.UTC()
			j.End = &t
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func writeRunsText(w io.Writer, runs []*archive.Run) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs")
		return
	}
	// Columns as wide as their longest value, so that long campaign names
	// keep the rows aligned.
	idw, cw := 16, len("CAMPAIGN")
	for _, r := range runs {
		idw = max(idw, len(r.ID))
		cw = max(cw, len(r.Campaign))
	}
	fmt.Fprintf(w, "%-*s  %-19s  %-*s  %-13s  %-8s  %s\n", idw, "ID", "START (UTC)", cw, "CAMPAIGN", "SOURCE", "STATE", "AXES: RESULT")
	for _, r := range runs {
		start := "-"
		if !r.Started.IsZero() {
			start = r.Started.UTC().Format("2006-01-02 15:04:05")
		}
		camp := r.Campaign
		if camp == "" {
			camp = "-"
		}
		names := make([]string, 0, len(r.Axes))
		for k := range r.Axes {
			names = append(names, k)
		}
		sort.Strings(names)
		var axes []string
		for _, k := range names {
			axes = append(axes, k+"="+pivotfmt.AxisText(k, r.Axes[k]))
		}
		res := r.Summary.Line()
		if r.State != archive.StateFinished {
			res = r.Error
		}
		fmt.Fprintf(w, "%-*s  %-19s  %-*s  %-13s  %-8s  %s: %s\n", idw, r.ID, start, cw, camp, r.Source, r.State, strings.Join(axes, " "), res)
	}
}
