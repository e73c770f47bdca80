package archiveview

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
)

func TestTableCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    Table
		want string
	}{
		{Table{Format: "text"}, "table needs --rows AXIS (bitrate, congestion, "},
		{Table{Rows: "window", Format: "html"}, `--format "html": want text, csv, json or markdown`},
	} {
		if err := c.t.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.t, err, c.want)
		}
	}
}

// A table's axes may be given by their flags' short names; the pivot is
// over the canonical ones, and JSON has no notes after it.
func TestTablePivotAndWrite(t *testing.T) {
	t.Parallel()
	run := func(window, parallel, bps float64) *archive.Run {
		return &archive.Run{State: archive.StateFinished, Summary: archive.Summary{ReceivedBps: num(bps)},
			Axes: map[string]archive.Axis{"window": {Num: num(window), Label: "w"}, "parallel": {Num: num(parallel), Label: "p"}}}
	}
	runs := []*archive.Run{run(65536, 1, 1e9), run(65536, 1, 3e9), run(65536, 2, 4e9)}
	tab := &Table{Rows: "w", Cols: "P", Value: "received_bits_per_second", Stat: archive.StatMean, Format: "json"}
	if err := tab.Check(); err != nil {
		t.Fatal(err)
	}
	pt, err := tab.Pivot(runs)
	if err != nil {
		t.Fatal(err)
	}
	if pt.RowAxis != "window" || pt.ColAxis != "parallel" || len(pt.Rows) != 1 || len(pt.Cols) != 2 {
		t.Fatalf("pivot %s × %s, %d rows, %d cols", pt.RowAxis, pt.ColAxis, len(pt.Rows), len(pt.Cols))
	}
	if c, ok := pt.Cell(0, 0); !ok || c.Value != 2e9 || c.N != 2 {
		t.Fatalf("cell %+v, want the mean of two runs, 2e9", c)
	}
	var b bytes.Buffer
	if err := tab.Write(context.Background(), &b, nil, pt, runs); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "{") || strings.Contains(b.String(), "NOTE") {
		t.Fatalf("JSON table:\n%s", b.String())
	}
	tab.Value = "no_such_value"
	if _, err := tab.Pivot(runs); err == nil {
		t.Fatal("a value that is no summary column pivots")
	}
}
