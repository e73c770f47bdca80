package daemon

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/grid"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/meshmetrics"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
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

// meshView is the view of the tasks whose source is source; "" for
// every task.
func (d *Daemon) meshView(ctx context.Context, source string) (meshView, []*schedule.Task, error) {
	tasks, err := d.tasksOf(ctx, source)
	if err != nil {
		return meshView{}, nil, err
	}
	return viewOf(tasks), tasks, nil
}

func viewOf(tasks []*schedule.Task) meshView {
	var v meshView
	byName := map[string]int{}
	hosts := map[string]bool{}
	for _, t := range tasks {
		// A rotating task's pairs are its source's with each of its destinations.
		for _, h := range append([]string{t.Source}, t.DestHosts()...) {
			if !hosts[h] {
				hosts[h] = true
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
	return v
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
// for what was not measured. A request-response test's RTT is its p50 and
// p99; a TCP test's is its mean, which is no percentile.
func pairFigures(p taskstore.PairStatus) schedule.PairFigures {
	f := schedule.PairFigures{GoodputBps: math.NaN(), LostPercent: math.NaN()}
	if p.GoodputBps != nil {
		f.GoodputBps = *p.GoodputBps
	}
	if p.LostPercent != nil {
		f.LostPercent = *p.LostPercent
	}
	ms := func(v *float64) time.Duration {
		if v == nil {
			return 0
		}
		return time.Duration(*v * float64(time.Millisecond))
	}
	f.RTTp50, f.RTTp99, f.RTTMean = ms(p.RTTp50ms), ms(p.RTTp99ms), ms(p.MeanRTTms)
	return f
}

// lastFigures are a pair's last figures, for the grid's cell and for
// /metrics alike.
func lastFigures(p taskstore.PairStatus) schedule.PairFigures {
	f := pairFigures(p)
	f.Src, f.Dst, f.Test, f.Direction, f.At, f.LastSuccess = p.Source, p.Dest, p.Test, direction(p.Direction), p.At, p.LastSuccess
	return f
}

// direction is the grid's half of a cell: a bidirectional test is shown
// as the source's data.
func direction(dir string) schedule.Direction {
	if schedule.Direction(dir) == schedule.Reverse {
		return schedule.Reverse
	}
	return schedule.Forward
}

// gridBase is what the grid page and its blocks both start from, read
// from the tasks alone: hosts, groups, tests (trace tests aside, by
// name in traces) and the pairs scheduled.
// It is drawn once for each load of the daemon's copy of the tasks and
// shared (its maps and groups are read, never changed): a 1,000-host
// sampled mesh schedules 2 million pairs.
func (d *Daemon) gridBase(ctx context.Context) (g grid.Grid, traces map[string]bool, rotating time.Duration, err error) {
	tasks, err := d.tasksOf(ctx, "")
	if err != nil {
		return grid.Grid{}, nil, 0, err
	}
	d.baseMu.Lock()
	defer d.baseMu.Unlock()
	if b := d.base; len(tasks) > 0 && len(b.tasks) == len(tasks) && &b.tasks[0] == &tasks[0] {
		g = b.g
		g.Generated = d.cfg.Clock.Now()
		return g, b.traces, b.rotating, nil
	}
	g, traces, rotating = d.drawGridBase(tasks)
	d.base = gridBaseCache{tasks: tasks, g: g, traces: traces, rotating: rotating}
	return g, traces, rotating, nil
}

// gridBaseCache is gridBase's answer for one list of tasks.
type gridBaseCache struct {
	tasks    []*schedule.Task
	g        grid.Grid
	traces   map[string]bool
	rotating time.Duration
}

func (d *Daemon) drawGridBase(tasks []*schedule.Task) (g grid.Grid, traces map[string]bool, rotating time.Duration) {
	v := viewOf(tasks)
	// A trace test has no figures to colour a cell with: its paths are
	// shown as route changes on the pair's other tests' histories.
	traces = map[string]bool{}
	var tests []grid.Test
	for _, t := range v.tests {
		if name, _, _ := strings.Cut(t.Command, " "); name == string(measure.KindTrace) {
			traces[t.Name] = true
			continue
		}
		tests = append(tests, t)
	}
	pairs := 0
	for _, t := range tasks {
		pairs += max(1, len(t.Dests))
	}
	g = grid.Grid{Title: "wireperf mesh", Generated: d.cfg.Clock.Now(), Refresh: time.Minute, Hosts: v.hosts, Tests: tests, Scheduled: make(map[grid.PairKey]bool, pairs)}
	for _, t := range tasks {
		if len(t.Dests) == 0 {
			g.Scheduled[grid.PairKey{Src: t.Source, Dst: t.Dest, Test: t.Name}] = true
		}
		for _, dst := range t.Dests {
			g.Scheduled[grid.PairKey{Src: t.Source, Dst: dst.Host, Test: t.Name}] = true
		}
		if len(t.Dests) > 1 {
			rotating = max(rotating, time.Duration(len(t.Dests))*t.Repeat)
		}
	}
	g.Groups = hostGroups(v.hosts, tasks)
	return g, traces, rotating
}

// addLastCells adds to g the last run of each scheduled pair that keep
// says to show, from the daemon's copy of the last results (gridcache.go):
// the runs changed since the last request are read, not the archive.
func (d *Daemon) addLastCells(ctx context.Context, g *grid.Grid, rotating time.Duration, keep func(taskstore.PairKey) bool) error {
	return d.lastRun.each(ctx, d.sched, g.Generated, rotating, func(k taskstore.PairKey) bool {
		return g.Scheduled[grid.PairKey{Src: k.Source, Dst: k.Dest, Test: k.Test}]
	}, func(k taskstore.PairKey, p taskstore.PairStatus) {
		if keep(k) {
			g.Cells = append(g.Cells, grid.Cell{Figures: lastFigures(p), State: p.State, Reason: d.viewReason(p.State, p.Reason)})
		}
	})
}

// gridView is the /grid page's data. A page of group summaries reads
// the tasks and the runs changed since the last request, and no history:
// its blocks fetch theirs (gridBlock). A page drawn host by host (at
// most grid.SummaryHosts hosts, or no groups) also reads every run of
// the last HistoryWindow and the path changes in it.
func (d *Daemon) gridView(ctx context.Context) (grid.Grid, error) {
	g, traces, rotating, err := d.gridBase(ctx)
	if err != nil {
		return grid.Grid{}, err
	}
	if err := d.addLastCells(ctx, &g, rotating, func(k taskstore.PairKey) bool { return !traces[k.Test] }); err != nil {
		return grid.Grid{}, err
	}
	if g.Summarised() {
		return g, nil
	}
	since := g.Generated.Add(-HistoryWindow)
	hist, err := d.sched.PairHistory(ctx, since)
	if err != nil {
		return grid.Grid{}, err
	}
	changes, err := d.store.Paths(ctx, archive.PathFilter{ChangedOnly: true, Since: since})
	if err != nil {
		return grid.Grid{}, err
	}
	for i := range hist {
		hist[i].Reason = d.viewReason(hist[i].State, hist[i].Reason)
	}
	addHistories(&g, hist, changes, traces)
	return g, nil
}

// gridBlock is the data of /grid/block?test=INDEX&from=GROUP&to=GROUP:
// the last runs of the block's pairs, and their histories and path
// changes of the last HistoryWindow, read through indexes bounded by
// the two groups' hosts (taskstore.Store.BlockHistory, archive.Store.BlockPathChanges). A
// request naming no test or group of the grid gets the grid without
// them, which grid.RenderBlock refuses.
func (d *Daemon) gridBlock(r *http.Request) (grid.Grid, error) {
	ctx := r.Context()
	g, traces, rotating, err := d.gridBase(ctx)
	if err != nil {
		return grid.Grid{}, err
	}
	q := r.URL.Query()
	ti, err := strconv.Atoi(q.Get("test"))
	if err != nil || ti < 0 || ti >= len(g.Tests) {
		return g, nil
	}
	test := g.Tests[ti].Name
	// A side over grid.MaxBlockHosts hosts is refused (RenderBlock says
	// how to drill in) before its histories are read.
	from, err := g.BlockRows(grid.BlockSide{Group: q.Get("from"), At: q.Get("from_at")})
	if err != nil {
		return g, nil
	}
	to, err := g.BlockHosts(grid.BlockSide{Group: q.Get("to"), At: q.Get("to_at")}, "to")
	if err != nil {
		return g, nil
	}
	rows, cols := setOf(from), setOf(to)
	if err := d.addLastCells(ctx, &g, rotating, func(k taskstore.PairKey) bool { return k.Test == test && rows[k.Source] && cols[k.Dest] }); err != nil {
		return grid.Grid{}, err
	}
	since := g.Generated.Add(-HistoryWindow)
	hist, err := d.sched.BlockHistory(ctx, from, to, test, since)
	if err != nil {
		return grid.Grid{}, err
	}
	changes, err := d.store.BlockPathChanges(ctx, from, to, since)
	if err != nil {
		return grid.Grid{}, err
	}
	for i := range hist {
		hist[i].Reason = d.viewReason(hist[i].State, hist[i].Reason)
	}
	addHistories(&g, hist, changes, traces)
	return g, nil
}

func setOf(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// addHistories adds to g one history per pair of hosts and test, both
// directions in it, from hist, and marks on each the path changes of its
// pair.
func addHistories(g *grid.Grid, hist []taskstore.PairStatus, changes []archive.Path, traces map[string]bool) {
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
		f := pairFigures(p)
		g.Histories[i].Points = append(g.Histories[i].Points, grid.Point{At: p.At, Direction: dir, State: p.State, Reason: p.Reason,
			GoodputBps: f.GoodputBps, LostPercent: f.LostPercent, RTTp50: f.RTTp50, RTTp99: f.RTTp99, RTTMean: f.RTTMean})
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
}

// hostGroups partitions the hosts by the mesh groups their tasks come
// from: groups overlap (a full mesh "all" and a region within it), so
// each host goes to the smallest group it is in, the first by name among
// equals; a host in no group (tasks added by hand) to "(no group)".
func hostGroups(hosts []string, tasks []*schedule.Task) []grid.Group {
	members := map[string]map[string]bool{}
	for _, t := range tasks {
		if t.Group == "" {
			continue
		}
		if members[t.Group] == nil {
			members[t.Group] = map[string]bool{}
		}
		members[t.Group][t.Source] = true
		for _, dst := range t.DestHosts() {
			members[t.Group][dst] = true
		}
	}
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := len(members[a]) - len(members[b]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	byGroup := map[string][]string{}
	for _, h := range hosts {
		group := "(no group)"
		for _, n := range names {
			if members[n][h] {
				group = n
				break
			}
		}
		byGroup[group] = append(byGroup[group], h)
	}
	var out []grid.Group
	for n, hs := range byGroup {
		out = append(out, grid.Group{Name: n, Hosts: hs})
	}
	slices.SortFunc(out, func(a, b grid.Group) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// metricsSnapshot is what one /metrics scrape exports: the pairs whose
// source is this host, so that a scrape's size and the queries behind it
// grow with this host's tasks and not with the mesh.
func (d *Daemon) metricsSnapshot(ctx context.Context) (meshmetrics.Snapshot, error) {
	host := d.cfg.Host
	v, tasks, err := d.meshView(ctx, host)
	if err != nil {
		return meshmetrics.Snapshot{}, err
	}
	if !slices.Contains(v.hosts, host) {
		v.hosts = append(v.hosts, host) // its queue is shown before it has a task
	}
	snap := meshmetrics.Snapshot{Host: host, Hosts: v.hosts, Runs: map[string]int64{}, QueueDepth: map[string]int64{host: 0},
		Colours: map[string]int64{}}
	for _, t := range v.tests {
		snap.Tests = append(snap.Tests, t.Name)
		th := t.Thresholds
		snap.Thresholds = append(snap.Thresholds, meshmetrics.Thresholds{Test: t.Name, Interval: t.Interval,
			GoodputAmberBps: th.GoodputAmberBps, GoodputRedBps: th.GoodputRedBps, LossAmber: th.LossAmberPercent / 100, LossRed: th.LossRedPercent / 100,
			RTTAmber: th.RTTp99Amber, RTTRed: th.RTTp99Red})
	}
	last, err := d.sched.LastResultsFrom(ctx, host)
	if err != nil {
		return snap, err
	}
	for _, p := range last {
		snap.Pairs = append(snap.Pairs, lastFigures(p))
	}
	snap.Colours, snap.Worst = judgePairs(tasks, v.tests, last, d.cfg.Clock.Now())
	counts, err := d.runs.counts(ctx, d.sched, host, d.cfg.Clock.Now())
	if err != nil {
		return snap, err
	}
	for state, n := range counts {
		snap.Runs[state] = int64(n)
	}
	waiting, err := d.sched.SchedRuns(ctx, taskstore.RunQuery{Source: host, States: []string{archive.StateScheduled}})
	if err != nil {
		return snap, err
	}
	snap.QueueDepth[host] = int64(len(waiting))
	changes, err := d.store.PathChangesFrom(ctx, host)
	if err != nil {
		return snap, err
	}
	for p := range changes {
		snap.Traced = append(snap.Traced, meshmetrics.PathPair{Src: p.Source, Dst: p.Dest, Test: p.Test})
	}
	return snap, nil
}

// judgePairs colours each half-cell the tasks schedule (trace tests,
// which have no figures, aside) as the grid does, and finds the worst:
// the most severe colour, the first pair in (destination, test,
// direction) order among equals.
func judgePairs(tasks []*schedule.Task, tests []grid.Test, last []taskstore.PairStatus, now time.Time) (map[string]int64, *meshmetrics.WorstPair) {
	byName := map[string]grid.Test{}
	for _, t := range tests {
		byName[t.Name] = t
	}
	type half struct {
		src, dst, test string
		dir            schedule.Direction
	}
	lastOf := make(map[half]grid.Cell, len(last))
	for _, p := range last {
		f := lastFigures(p)
		lastOf[half{f.Src, f.Dst, f.Test, f.Direction}] = grid.Cell{Figures: f, State: p.State, Reason: p.Reason}
	}
	var halves []half
	seen := map[half]bool{}
	for _, t := range tasks {
		if len(t.Args) > 0 && t.Args[0] == string(measure.KindTrace) {
			continue
		}
		dir := direction(string(t.Direction()))
		for _, dst := range t.DestHosts() {
			h := half{t.Source, dst, t.Name, dir}
			if !seen[h] {
				seen[h] = true
				halves = append(halves, h)
			}
		}
	}
	slices.SortFunc(halves, func(a, b half) int {
		return strings.Compare(a.dst+"\x00"+a.test+"\x00"+string(a.dir), b.dst+"\x00"+b.test+"\x00"+string(b.dir))
	})
	colours := map[string]int64{}
	var worst *meshmetrics.WorstPair
	worstRank := -1
	for _, h := range halves {
		c, ok := lastOf[h]
		if !ok {
			c = grid.Cell{Figures: schedule.PairFigures{Src: h.src, Dst: h.dst, Test: h.test, Direction: h.dir,
				GoodputBps: math.NaN(), LostPercent: math.NaN()}}
		}
		v := grid.Judge(c, byName[h.test], now)
		colours[string(v.Colour)]++
		if r := grid.Severity(v.Colour); r > worstRank {
			worstRank = r
			worst = &meshmetrics.WorstPair{Src: h.src, Dst: h.dst, Test: h.test, Direction: h.dir, Colour: string(v.Colour)}
		}
	}
	return colours, worst
}

// readable applies the API's rule for reads to a view: open, or the
// bearer token when reads_need_token is set.
func (d *Daemon) readable(h http.Handler) http.Handler {
	return d.read(func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	})
}
