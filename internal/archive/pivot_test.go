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
	t.Parallel()
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
	t.Parallel()
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

// A table without cells says why: here, iperf2 client logs have only the
// sender's figures, and the table names the value they have.
func TestPivotSaysWhyEmpty(t *testing.T) {
	t.Parallel()
	sender := func() *Run {
		return &Run{State: StateFinished, Axes: map[string]Axis{"window": {Num: f64(65536)}}, Summary: Summary{SentBps: f64(9e8)}}
	}
	for _, tc := range []struct {
		name  string
		runs  []*Run
		value string
		want  string
	}{
		{"sender only", []*Run{sender(), sender(), sender()}, "received_bits_per_second",
			"3 runs have only sender figures: try --value sent_bits_per_second"},
		{"none finished", []*Run{{State: StateFailed, Axes: map[string]Axis{"window": {Num: f64(1)}}}, {State: StateRunning, Axes: map[string]Axis{"window": {Num: f64(1)}}}},
			"received_bits_per_second", "2 runs, none finished (1 failed, 1 running)"},
		{"no figure", []*Run{sender()}, FigureCPULocalTotal, "1 run has no cpu_local_total: runs stored before wireperf kept it, and text logs, have none"},
		{"nothing", nil, "received_bits_per_second", "no run matches the selection"},
	} {
		tab, _, err := Pivot(tc.runs, "window", "", tc.value, StatMean)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(tab.Cells) != 0 || tab.Why != tc.want {
			t.Errorf("%s: %d cells, why %q; want none, %q", tc.name, len(tab.Cells), tab.Why, tc.want)
		}
	}
	// A table with cells has nothing to explain.
	if tab, _, _ := Pivot([]*Run{sender()}, "window", "", "sent_bits_per_second", StatMean); tab.Why != "" || len(tab.Cells) != 1 {
		t.Errorf("a full table explains itself: %q", tab.Why)
	}
}
