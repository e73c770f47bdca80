package daemon

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/grid"
	"github.com/wireperf/wireperf/internal/meshmetrics"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/testdef"
)

// The daemon's two views of the shared schedule and its results: /metrics
// for Prometheus and /grid for people. Both read the archive when asked,
// so that every daemon of a mesh shows the same values and none keeps a
// copy that could go stale. Hosts and tests come from the tasks, which
// bounds the metrics' label sets: a pair whose task was removed drops out.

// HistoryWindow is how far back the grid's click-through history goes.
const HistoryWindow = 24 * time.Hour

// meshView is the tasks' hosts and tests.
type meshView struct {
	hosts []string
	tests []grid.Test
}

func (d *Daemon) meshView(ctx context.Context) (meshView, error) {
	tasks, err := d.store.Tasks(ctx, "")
	if err != nil {
		return meshView{}, err
	}
	var v meshView
	byName := map[string]int{}
	for _, t := range tasks {
		for _, h := range []string{t.Source, t.Dest} {
			if !slices.Contains(v.hosts, h) {
				v.hosts = append(v.hosts, h)
			}
		}
		i, seen := byName[t.Name]
		if !seen {
			i = len(v.tests)
			byName[t.Name] = i
			v.tests = append(v.tests, grid.Test{Name: t.Name, Command: strings.Join(t.Args, " "),
				Interval: t.Repeat, OneWay: true, Thresholds: gridThresholds(t.Thresholds)})
		}
		if t.Direction() != schedule.Forward {
			v.tests[i].OneWay = false
		}
	}
	slices.Sort(v.hosts)
	return v, nil
}

func gridThresholds(t schedule.Thresholds) grid.Thresholds {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return grid.Thresholds{
		GoodputAmberBps: t.GoodputAmberBps, GoodputRedBps: t.GoodputRedBps,
		LossAmberPercent: t.LossAmberPct, LossRedPercent: t.LossRedPct,
		RTTp99Amber: ms(t.RTTAmberMs), RTTp99Red: ms(t.RTTRedMs),
		StaleIntervals: t.StaleIntervals,
	}
}

// pairFigures are a PairStatus's values as the views take them: NaN and 0
// for what was not measured. A request-response test's RTT is its p50
// and p99; a TCP test's is its mean, shown as both.
func pairFigures(p archive.PairStatus) (goodput, loss float64, p50, p99 time.Duration) {
	goodput, loss = math.NaN(), math.NaN()
	if p.GoodputBps != nil {
		goodput = *p.GoodputBps
	}
	if p.LostPercent != nil {
		loss = *p.LostPercent
	}
	ms := func(v *float64) time.Duration {
		if v == nil {
			return 0
		}
		return time.Duration(*v * float64(time.Millisecond))
	}
	p50, p99 = ms(p.RTTp50ms), ms(p.RTTp99ms)
	if p50 == 0 && p99 == 0 {
		p50 = ms(p.MeanRTTms)
		p99 = p50
	}
	return goodput, loss, p50, p99
}

// lastFigures are a pair's last figures, for the grid's cell and for
// /metrics alike.
func lastFigures(p archive.PairStatus) schedule.PairFigures {
	goodput, loss, p50, p99 := pairFigures(p)
	return schedule.PairFigures{Src: p.Source, Dst: p.Dest, Test: p.Test, Direction: direction(p.Direction), At: p.At,
		GoodputBps: goodput, LostPercent: loss, RTTp50: p50, RTTp99: p99, LastSuccess: p.LastSuccess}
}

// direction is the grid's half of a cell: a bidirectional test is shown
// as the source's data.
func direction(dir string) schedule.Direction {
	if schedule.Direction(dir) == schedule.Reverse {
		return schedule.Reverse
	}
	return schedule.Forward
}

// gridView is the /grid page's data.
func (d *Daemon) gridView(ctx context.Context) (grid.Grid, error) {
	v, err := d.meshView(ctx)
	if err != nil {
		return grid.Grid{}, err
	}
	last, err := d.store.LastResults(ctx)
	if err != nil {
		return grid.Grid{}, err
	}
	now := d.cfg.Clock.Now()
	hist, err := d.store.PairHistory(ctx, now.Add(-HistoryWindow))
	if err != nil {
		return grid.Grid{}, err
	}
	// A trace test has no figures to colour a cell with: its paths are
	// shown as route changes on the pair's other tests' histories.
	traces := map[string]bool{}
	var tests []grid.Test
	for _, t := range v.tests {
		if name, _, _ := strings.Cut(t.Command, " "); name == string(testdef.KindTrace) {
			traces[t.Name] = true
			continue
		}
		tests = append(tests, t)
	}
	g := grid.Grid{Title: "wireperf mesh", Generated: now, Refresh: time.Minute, Hosts: v.hosts, Tests: tests}
	for _, p := range last {
		if !traces[p.Test] {
			g.Cells = append(g.Cells, grid.Cell{Figures: lastFigures(p), State: p.State, Reason: p.Reason})
		}
	}
	// One history per pair of hosts and test, both directions in it.
	index := map[[3]string]int{}
	for _, p := range hist {
		if traces[p.Test] {
			continue
		}
		src, dst := p.Source, p.Dest
		if src > dst { // the pair's two directions share one history
			src, dst = dst, src
		}
		k := [3]string{src, dst, p.Test}
		i, ok := index[k]
		if !ok {
			i = len(g.Histories)
			index[k] = i
			g.Histories = append(g.Histories, grid.History{Src: src, Dst: dst, Test: p.Test})
		}
		dir := direction(p.Direction)
		if p.Source != src { // the other host's forward test is this pair's reverse
			dir = schedule.Reverse
			if direction(p.Direction) == schedule.Reverse {
				dir = schedule.Forward
			}
		}
		goodput, loss, p50, p99 := pairFigures(p)
		g.Histories[i].Points = append(g.Histories[i].Points, grid.Point{At: p.At, Direction: dir,
			State: p.State, Reason: p.Reason, GoodputBps: goodput, LostPercent: loss, RTTp50: p50, RTTp99: p99})
	}
	changes, err := d.store.Paths(ctx, archive.PathFilter{ChangedOnly: true, Since: now.Add(-HistoryWindow)})
	if err != nil {
		return grid.Grid{}, err
	}
	for _, p := range changes {
		for i := range g.Histories {
			h := &g.Histories[i]
			dir := schedule.Forward
			switch {
			case h.Src == p.Source && h.Dst == p.Dest:
			case h.Src == p.Dest && h.Dst == p.Source:
				dir = schedule.Reverse
			default:
				continue
			}
			h.RouteChanges = append(h.RouteChanges, grid.RouteChange{At: p.At, Direction: dir, From: p.Prev, To: p.Hops})
		}
	}
	return g, nil
}

// metricsSnapshot is what one /metrics scrape exports.
func (d *Daemon) metricsSnapshot(ctx context.Context) (meshmetrics.Snapshot, error) {
	v, err := d.meshView(ctx)
	if err != nil {
		return meshmetrics.Snapshot{}, err
	}
	snap := meshmetrics.Snapshot{Hosts: v.hosts, Runs: map[string]int64{}, QueueDepth: map[string]int64{}}
	for _, t := range v.tests {
		snap.Tests = append(snap.Tests, t.Name)
	}
	last, err := d.store.LastResults(ctx)
	if err != nil {
		return snap, err
	}
	for _, p := range last {
		snap.Pairs = append(snap.Pairs, lastFigures(p))
	}
	counts, err := d.store.StateCounts(ctx)
	if err != nil {
		return snap, err
	}
	for state, n := range counts {
		snap.Runs[state] = int64(n)
	}
	waiting, err := d.store.SchedRuns(ctx, archive.RunQuery{States: []string{archive.StateScheduled}})
	if err != nil {
		return snap, err
	}
	for _, h := range v.hosts {
		snap.QueueDepth[h] = 0
	}
	for _, r := range waiting {
		snap.QueueDepth[r.Source]++
	}
	changes, err := d.store.PathChanges(ctx)
	if err != nil {
		return snap, err
	}
	for p, n := range changes {
		snap.PathChanges = append(snap.PathChanges, meshmetrics.PathChanges{Src: p.Source, Dst: p.Dest, Test: p.Test, Count: n})
	}
	return snap, nil
}

// readable applies the API's rule for reads to a view: open, or the
// bearer token when reads_need_token is set.
func (d *Daemon) readable(h http.Handler) http.Handler {
	return d.read(func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	})
}
