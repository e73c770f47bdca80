package archiveview

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
)

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

// axesJSON gives each axis its number in base units, or its word. A
// number JSON can't carry (NaN, ±Inf: a row stored before imports were
// held to finite figures) gives its word, so that one such row can't
// make the whole archive's `runs -J` fail.
func axesJSON(axes map[string]archive.Axis) map[string]any {
	out := map[string]any{}
	for k, a := range axes {
		if a.Num != nil && !math.IsNaN(*a.Num) && !math.IsInf(*a.Num, 0) {
			out[k] = *a.Num
		} else {
			out[k] = a.Label
		}
	}
	return out
}

// finiteValues leaves out the figures JSON can't carry: a stored NaN or
// ±Inf is no measurement, and it would fail the encoding of every run.
func finiteValues(m map[string]float64) map[string]float64 {
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(m, k)
		}
	}
	return m
}

// WriteRunsJSON writes the runs as one JSON array (`wireperf runs -J`).
func WriteRunsJSON(w io.Writer, runs []*archive.Run) error {
	out := make([]runJSON, 0, len(runs))
	for _, r := range runs {
		j := runJSON{ID: r.ID, Source: r.Source, SourceFile: r.SourceFile, Axes: axesJSON(r.Axes), State: r.State,
			Error: r.Error, Rep: r.Rep, LocalHost: r.LocalHost, RemoteHost: r.RemoteHost, Rounded: r.Rounded,
			Summary: finiteValues(r.Summary.Values())}
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

// WriteRunsText writes the runs one a line under a header (`wireperf
// runs`): ID, start, campaign, source, state, the axes and the result or
// the error.
func WriteRunsText(w io.Writer, runs []*archive.Run) {
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
		var axes []string
		for _, k := range axisNames(r) {
			axes = append(axes, k+"="+pivotfmt.AxisText(k, r.Axes[k]))
		}
		res := r.Summary.Line()
		if r.State != archive.StateFinished {
			res = r.Error
		}
		fmt.Fprintf(w, "%-*s  %-19s  %-*s  %-13s  %-8s  %s: %s\n", idw, r.ID, start, cw, camp, r.Source, r.State, strings.Join(axes, " "), res)
	}
}

// axisNames are a run's axes in order.
func axisNames(r *archive.Run) []string {
	names := make([]string, 0, len(r.Axes))
	for k := range r.Axes {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// RecentRunIDs names up to ten of the runs, newest first, and how many
// more there are: for a message that says which runs there are.
func RecentRunIDs(runs []*archive.Run) []string {
	runs = slices.Clone(runs)
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].Started.After(runs[j].Started) })
	var ids []string
	for i, r := range runs {
		if i == 10 {
			ids = append(ids, fmt.Sprintf("and %d more", len(runs)-10))
			break
		}
		ids = append(ids, r.ID)
	}
	return ids
}
