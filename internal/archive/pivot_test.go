package archive

import (
	"strings"
	"testing"
)

func pivotRun(window, streams float64, bps float64, state string) *Run {
	return &Run{State: state, Axes: map[string]Axis{"window": {Num: f64(window)}, "parallel": {Num: f64(streams)}, "direction": {Label: "up"}},
		Summary: Summary{ReceivedBps: f64(bps)}}
}

func TestPivotStats(t *testing.T) {
	runs := []*Run{
		pivotRun(1<<20, 4, 30, StateFinished), pivotRun(1<<20, 4, 10, StateFinished), pivotRun(1<<20, 4, 20, StateFinished),
		pivotRun(1<<20, 4, 1000, StateFailed), // not finished: left out
		pivotRun(65536, 4, 5, StateFinished), pivotRun(65536, 1, 7, StateFinished), pivotRun(1<<20, 1, 9, StateFinished),
		pivotRun(1<<20, 1, 11, StateFinished),
		{State: StateFinished, Axes: map[string]Axis{"window": {Num: f64(1)}}}, // no parallel axis: skipped
	}
	for stat, want := range map[string]float64{StatMean: 20, StatMedian: 20, StatMin: 10, StatMax: 30} {
		tab, skipped, err := Pivot(runs, "window", "parallel", "received_bits_per_second", stat)
		if err != nil {
			t.Fatal(err)
		}
		if skipped != 1 || len(tab.Rows) != 2 || *tab.Rows[0].Num != 65536 || len(tab.Cols) != 2 || *tab.Cols[0].Num != 1 {
			t.Fatalf("table %+v, skipped %d", tab, skipped)
		}
		c, ok := tab.Cell(1, 1) // 1M × 4 streams
		if !ok || c.Value != want || c.N != 3 || c.Min != 10 || c.Max != 30 {
			t.Errorf("%s: cell %+v, want %g over 3", stat, c, want)
		}
		if c, _ := tab.Cell(1, 0); stat == StatMedian && c.Value != 10 {
			t.Errorf("median of 9 and 11 = %g", c.Value)
		}
	}
	if _, _, err := Pivot(runs, "window", "colour", "received_bits_per_second", StatMean); err == nil || !strings.Contains(err.Error(), "parallel") {
		t.Errorf("unknown axis: %v (want the axes that exist)", err)
	}
	if _, _, err := Pivot(runs, "window", "parallel", "speed", StatMean); err == nil {
		t.Error("unknown value accepted")
	}
	if _, _, err := Pivot(runs, "window", "parallel", "received_bits_per_second", "mode"); err == nil {
		t.Error("unknown stat accepted")
	}
}

func TestPivotOneColumn(t *testing.T) {
	runs := []*Run{pivotRun(1, 1, 10, StateFinished), pivotRun(1, 2, 20, StateFinished), pivotRun(2, 1, 40, StateFinished)}
	tab, _, err := Pivot(runs, "window", "", "received_bits_per_second", StatMax)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Cols) != 1 || len(tab.Rows) != 2 {
		t.Fatalf("table %+v", tab)
	}
	if c, _ := tab.Cell(0, 0); c.Value != 20 || c.N != 2 {
		t.Errorf("cell %+v, want the max 20 of 2 runs", c)
	}
}
