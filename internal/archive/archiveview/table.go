package archiveview

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/campaign"
)

// A Table is `wireperf table`'s pivot of stored runs: a summary value
// (Value) over the axis down the side (Rows) and the one across the top
// (Cols, "" for none), one statistic (Stat) over repetitions, printed in
// one of pivotfmt.Formats.
type Table struct {
	Rows, Cols    string
	Value, Stat   string
	Format        string
	rowAxis, cols string // the axes by their canonical names
}

// Check checks the table's axes and format before any archive is read.
func (t *Table) Check() error {
	if t.Rows == "" {
		return fmt.Errorf("table needs --rows AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
	}
	if !slices.Contains(pivotfmt.Formats, t.Format) {
		return fmt.Errorf("--format %q: want text, csv, json or markdown", t.Format)
	}
	t.rowAxis, _ = campaign.CanonicalAxis(t.Rows)
	t.cols = t.Cols
	if t.cols != "" {
		t.cols, _ = campaign.CanonicalAxis(t.cols)
	}
	return nil
}

// Pivot pivots runs over the table's axes (archive.Pivot); Check first.
// Its errors say the runs cannot be tabulated so: another axis, value
// or statistic can.
func (t *Table) Pivot(runs []*archive.Run) (*archive.Table, error) {
	tab, _, err := archive.Pivot(runs, t.rowAxis, t.cols, t.Value, t.Stat)
	return tab, err
}

// Write prints the pivot tab of runs in the table's format. The text
// forms add a note on the windows a host's buffer limits capped (read
// from store) when a window axis is shown; JSON and CSV, being for
// programs, have no notes after them.
func (t *Table) Write(ctx context.Context, w io.Writer, store *archive.Store, tab *archive.Table, runs []*archive.Run) error {
	if err := pivotfmt.Write(w, tab, t.Format); err != nil || t.Format == "json" || t.Format == "csv" {
		return err
	}
	if t.rowAxis == campaign.AxisWindow || t.cols == campaign.AxisWindow {
		for _, note := range pivotfmt.CappedWindowNotes(ctx, store, runs) {
			fmt.Fprintf(w, "NOTE: %s\n", note)
		}
	}
	return nil
}
