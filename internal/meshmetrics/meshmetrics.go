// Package meshmetrics exports the mesh's state to Prometheus: the last
// values measured on every (source, destination, test) whose source is
// this host, the tests' thresholds, this host's pairs by colour, its worst
// pair, the runs it ended and the path changes it saw, the schedule lag,
// the queue depth, the build and Go's runtime metrics.
//
// Each daemon exports only the pairs it is the source of, so a scrape
// grows with this host's pairs (H−1 per test and direction), not with
// the mesh's H(H−1): Prometheus, scraping every daemon, still has every
// pair once.
//
// The per-pair values and the queue depth are read from a snapshot at
// scrape time, so that the archive stays the one place that holds them
// and no gauge can go stale when a pair leaves the mesh. What only goes
// up is counted by the daemon itself as it happens (the runs it ended by
// test kind and outcome, the path changes it recorded, the schedule lag):
// a counter read from the archive would fall at an `archive prune`, which
// Prometheus takes for a reset.
//
// Label values are bounded by the mesh: a pair whose source, destination
// or test the snapshot's mesh does not name, a queue of a host it does not
// name and a run state outside States are left out of the scrape and
// counted in wireperf_mesh_snapshot_dropped.
package meshmetrics

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/version"
)

// Direction is which way a pair's data flowed: from the source to the
// destination (Forward), or back (Reverse, a test run with -R or both ways).
type Direction = schedule.Direction

const (
	Forward = schedule.Forward
	Reverse = schedule.Reverse
)

// States are the run states, in the order a run goes through them.
var States = []string{"scheduled", "running", "finished", "failed", "missed", "aborted"}

// Outcomes are the states a run ends in: the outcome label of
// wireperf_mesh_runs_total.
var Outcomes = []string{"finished", "failed", "missed", "aborted"}

// Snapshot is the mesh as the archive has it at scrape time.
type Snapshot struct {
	// Host is this daemon's host: the source of its pairs and the host
	// label of its aggregates. Empty: no aggregates are exported.
	Host string
	// Hosts and Tests are the configured mesh: they bound every label.
	Hosts []string
	Tests []string
	// Thresholds are the tests' thresholds, as the grid judges them.
	Thresholds []Thresholds
	// Pairs are the last values of every measured pair.
	Pairs []Pair
	// Colours count this host's scheduled pairs (per test and direction)
	// by the grid's colour of their last result (keys from Colours).
	Colours map[string]int64
	// Worst is this host's worst pair as the grid judges it; nil when
	// it has none.
	Worst *WorstPair
	// Runs counts the archive's runs by state (keys from States).
	Runs map[string]int64
	// QueueDepth counts, per host, the jobs waiting on its queue.
	QueueDepth map[string]int64
	// Traced are the (source, destination, trace test) whose paths the
	// archive holds: the pairs wireperf_mesh_path_changes_total shows,
	// 0 until this daemon sees a change.
	Traced []PathPair
}

// Thresholds are one test's thresholds (zero: not set) and how often it
// runs (zero: unknown).
type Thresholds struct {
	Test                           string
	GoodputAmberBps, GoodputRedBps float64
	// LossAmber and LossRed are ratios, 0 to 1.
	LossAmber, LossRed float64
	RTTAmber, RTTRed   time.Duration
	Interval           time.Duration
}

// Colours are the grid's colours, worst first but for unmeasured: a
// scheduled pair with no result yet.
var Colours = []string{"red", "amber", "grey", "unmeasured", "green"}

// WorstPair is the pair whose last result the grid colours worst.
type WorstPair struct {
	Src, Dst, Test string
	Direction      Direction
	Colour         string
}

// PathPair names the path from Src to Dst that the trace test Test
// records.
type PathPair struct {
	Src, Dst, Test string
}

// Pair is the last result of one test from Src to Dst in one direction.
// A value not measured is NaN (goodput, loss) or zero (RTT, times): it is
// left out of the scrape rather than shown as zero.
type Pair = schedule.PairFigures

// SnapshotFunc reads the snapshot; it is called once per scrape, and by
// scrapes that overlap at the same time.
type SnapshotFunc func(ctx context.Context) (Snapshot, error)

// LagBuckets are the schedule lag histogram's upper bounds in seconds:
// fine below the 2 s a healthy schedule keeps to, coarse up to the
// minutes a run may slip.
var LagBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900}

// DefaultTimeout bounds one snapshot read.
const DefaultTimeout = 10 * time.Second

// Metrics is the daemon's metrics on a registry of its own.
type Metrics struct {
	reg     *prometheus.Registry
	lag     prometheus.Histogram
	runs    *prometheus.CounterVec
	running prometheus.Gauge
	mesh    *meshCollector
	kinds   []string
}

// New registers the mesh collector reading snapshot (with timeout per
// scrape, DefaultTimeout if zero), the counters of the runs host's
// daemon ends of each of kinds (the test kinds it knows), the schedule lag
// histogram, wireperf_build_info and the Go runtime and process
// collectors on a new registry. host labels what the daemon counts itself.
func New(host string, kinds []string, snapshot SnapshotFunc, timeout time.Duration) *Metrics {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hostLabel := prometheus.Labels{"host": host}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:        "wireperf_mesh_schedule_lag_seconds",
			Help:        "How late this host's worker started its runs: actual start minus planned start (an early start counts as 0).",
			Buckets:     LagBuckets,
			ConstLabels: hostLabel,
		}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "wireperf_mesh_runs_total",
			Help:        "Runs this daemon ended since it started, by test kind (the test's command; other: one this build does not know) and outcome (finished, failed, missed, aborted).",
			ConstLabels: hostLabel,
		}, []string{"kind", "outcome"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name:        "wireperf_mesh_running_runs",
			Help:        "Runs this daemon is running now.",
			ConstLabels: hostLabel,
		}),
		mesh:  &meshCollector{snapshot: snapshot, timeout: timeout, changes: map[PathPair]float64{}},
		kinds: slices.Clone(kinds),
	}
	// Every kind and outcome from the start, so that increase() sees the
	// first failure of a kind as an increase from 0.
	for _, k := range m.kinds {
		for _, o := range Outcomes {
			m.runs.WithLabelValues(k, o)
		}
	}
	v := version.Get()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "wireperf_build_info",
		Help:        "Always 1: the build of this host's daemon, by release, commit and Go version.",
		ConstLabels: prometheus.Labels{"host": host, "version": v.Release, "revision": v.Commit, "goversion": v.Go},
	})
	buildInfo.Set(1)
	m.reg.MustRegister(
		m.mesh,
		m.lag,
		m.runs,
		m.running,
		buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// ObserveLag records that a run planned for planned started at started.
func (m *Metrics) ObserveLag(planned, started time.Time) {
	m.lag.Observe(max(started.Sub(planned), 0).Seconds())
}

// RunStarted counts a run as running until RunEnded.
func (m *Metrics) RunStarted() { m.running.Inc() }

// RunEnded counts a run of kind that ended in outcome; started says it
// was counted by RunStarted. A kind New was not given (a task the
// archive holds that this build does not know) is counted as "other",
// and an outcome outside Outcomes not at all.
func (m *Metrics) RunEnded(kind, outcome string, started bool) {
	if started {
		m.running.Dec()
	}
	if !slices.Contains(Outcomes, outcome) {
		return
	}
	if !slices.Contains(m.kinds, kind) {
		kind = "other"
	}
	m.runs.WithLabelValues(kind, outcome).Inc()
}

// PathChanged counts a change of the path p.
func (m *Metrics) PathChanged(p PathPair) {
	m.mesh.mu.Lock()
	m.mesh.changes[p]++
	m.mesh.mu.Unlock()
}

// Registry is the registry the metrics live on, for a caller that adds
// collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus's text format (or the format
// the scraper asks for). A snapshot that fails leaves its metrics out and
// is reported in the body's place only when nothing else can be served;
// promhttp_metric_handler_errors_total counts it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.InstrumentMetricHandler(m.reg,
		promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: m.reg}))
}

// Deprecated are the names kept for one release beside the ones that
// replace them: the goodput in bits (promtool asks for the base unit,
// bytes), the RTT with its statistic in the name, and the run counts read
// from the archive, which fall when it is pruned.
var Deprecated = []string{"wireperf_mesh_goodput_bits_per_second", "wireperf_mesh_rtt_p99_seconds", "wireperf_mesh_rtt_mean_seconds", "wireperf_mesh_runs"}

// deprecated starts the HELP of a name kept for one release.
const deprecated = "Deprecated: kept for one release, then removed; "

var (
	pairLabels  = []string{"src", "dst", "test", "direction"}
	descGoodput = prometheus.NewDesc("wireperf_mesh_goodput_bytes_per_second",
		"Goodput of the pair's last finished run, in bytes per second (Prometheus's base unit: 8 times this is the bit/s that wireperf and the grid show).", pairLabels, nil)
	descGoodputBits = prometheus.NewDesc("wireperf_mesh_goodput_bits_per_second",
		deprecated+"use 8 * wireperf_mesh_goodput_bytes_per_second. Goodput of the pair's last finished run, bit/s.", pairLabels, nil)
	descLoss = prometheus.NewDesc("wireperf_mesh_loss_ratio",
		"Share of datagrams, packets or echo requests lost in the pair's last finished run, or of a tcp-connect test's attempts that did not connect (0 to 1).", pairLabels, nil)
	descRTT = prometheus.NewDesc("wireperf_mesh_rtt_seconds",
		"Round-trip time of the pair's last finished run: statistic p99 (the 99th percentile of a request-response test's transactions, a ping test's echoes or a tcp-connect test's handshakes) or mean (their mean, or the mean of a TCP test's smoothed RTT).",
		append(slices.Clone(pairLabels), "statistic"), nil)
	descRTTp99 = prometheus.NewDesc("wireperf_mesh_rtt_p99_seconds",
		deprecated+"use wireperf_mesh_rtt_seconds{statistic=\"p99\"}. 99th percentile round-trip time of the pair's last finished run (request-response tests).", pairLabels, nil)
	descRTTMean = prometheus.NewDesc("wireperf_mesh_rtt_mean_seconds",
		deprecated+"use wireperf_mesh_rtt_seconds{statistic=\"mean\"}. Mean of the kernel's smoothed round-trip time over the pair's last finished TCP run.", pairLabels, nil)
	descResultTime = prometheus.NewDesc("wireperf_mesh_result_timestamp_seconds",
		"Unix time the pair's last run ended (or was due), when it did not succeed; otherwise see wireperf_mesh_last_success_timestamp_seconds.", pairLabels, nil)
	descLastSuccess = prometheus.NewDesc("wireperf_mesh_last_success_timestamp_seconds",
		"Unix time the pair's last successful run finished.", pairLabels, nil)
	descRuns = prometheus.NewDesc("wireperf_mesh_runs",
		deprecated+"use wireperf_mesh_runs_total for runs ended and wireperf_mesh_queue_depth and wireperf_mesh_running_runs for runs waiting and running. This host's runs in the archive by state; it falls when the archive is pruned.",
		[]string{"state"}, nil)
	descQueue = prometheus.NewDesc("wireperf_mesh_queue_depth",
		"Jobs waiting on a host's queue.", []string{"host"}, nil)
	descPathChanges = prometheus.NewDesc("wireperf_mesh_path_changes_total",
		"Times this daemon recorded that the pair's path, as its trace test records it, differed from the run before (a hop answering from another address, or a hop more or fewer), since it started.",
		[]string{"src", "dst", "test"}, nil)
	descPairs = prometheus.NewDesc("wireperf_mesh_pairs",
		"This host's scheduled pairs (per test and direction) by the grid's colour of their last result; unmeasured: no result yet.",
		[]string{"host", "colour"}, nil)
	descWorst = prometheus.NewDesc("wireperf_mesh_worst_pair_info",
		"This host's worst pair as the grid judges it (red, then amber, grey, unmeasured, green), always 1.",
		[]string{"src", "dst", "test", "direction", "colour"}, nil)
	descHostPathChanges = prometheus.NewDesc("wireperf_mesh_host_path_changes_total",
		"Path changes this daemon recorded over all its pairs' trace tests since it started (the sum of its wireperf_mesh_path_changes_total).",
		[]string{"host"}, nil)
	descDropped = prometheus.NewDesc("wireperf_mesh_snapshot_dropped",
		"Entries of the last snapshot left out because the mesh does not name them (kind: pair, state or queue).", []string{"kind"}, nil)
	thresholdLabels   = []string{"test", "level"}
	descGoodputThresh = prometheus.NewDesc("wireperf_mesh_goodput_threshold_bytes_per_second",
		"A test's goodput threshold in bytes per second: a pair's last goodput below it is coloured level (amber or red) on the grid.", thresholdLabels, nil)
	descLossThresh = prometheus.NewDesc("wireperf_mesh_loss_threshold_ratio",
		"A test's loss threshold: a pair's last loss ratio above it is coloured level (amber or red) on the grid.", thresholdLabels, nil)
	descRTTThresh = prometheus.NewDesc("wireperf_mesh_rtt_threshold_seconds",
		"A test's RTT threshold: a pair's last wireperf_mesh_rtt_seconds above it is coloured level (amber or red) on the grid.", thresholdLabels, nil)
	descInterval = prometheus.NewDesc("wireperf_mesh_test_interval_seconds",
		"How often a test repeats.", []string{"test"}, nil)
)

// meshCollector turns one snapshot per scrape into constant metrics, with
// the path changes the daemon counted for the pairs the snapshot names.
type meshCollector struct {
	snapshot SnapshotFunc
	timeout  time.Duration
	mu       sync.Mutex
	changes  map[PathPair]float64
}

func (c *meshCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descGoodput, descGoodputBits, descLoss, descRTT, descRTTp99, descRTTMean, descResultTime, descLastSuccess, descRuns, descQueue, descPathChanges,
		descPairs, descWorst, descHostPathChanges, descDropped, descGoodputThresh, descLossThresh, descRTTThresh, descInterval} {
		ch <- d
	}
}

func (c *meshCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	s, err := c.snapshot(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRuns, errors.Join(errors.New("mesh snapshot"), err))
		return
	}
	c.mu.Lock()
	changes := make(map[PathPair]float64, len(c.changes))
	for p, n := range c.changes {
		changes[p] = n
	}
	c.mu.Unlock()
	for _, m := range s.metrics(changes) {
		ch <- m
	}
}

// metrics are the snapshot's metrics, with changes the path changes
// counted for its traced pairs, and with what the mesh does not name
// left out and counted.
func (s Snapshot) metrics(changes map[PathPair]float64) []prometheus.Metric {
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	var droppedPairs, droppedStates, droppedQueues int
	// Sets, not slices.Contains: a scrape checks every pair's labels.
	hosts, tests := set(s.Hosts), set(s.Tests)
	// A pair named twice is shown once (the first): two samples with the
	// same labels would fail the whole scrape.
	seen := make(map[[4]string]bool, len(s.Pairs))
	for _, p := range s.Pairs {
		dir := p.Direction
		if dir == "" {
			dir = Forward
		}
		key := [4]string{p.Src, p.Dst, p.Test, string(dir)}
		if !hosts[p.Src] || !hosts[p.Dst] || !tests[p.Test] ||
			(dir != Forward && dir != Reverse) || seen[key] {
			droppedPairs++
			continue
		}
		seen[key] = true
		labels := key[:]
		if finite(p.GoodputBps) {
			gauge(descGoodput, p.GoodputBps/8, labels...)
			gauge(descGoodputBits, p.GoodputBps, labels...)
		}
		if finite(p.LostPercent) {
			gauge(descLoss, p.LostPercent/100, labels...)
		}
		// The median RTT (p50) is not exported: at 1,000 hosts with
		// host names of 30 characters the scrape would pass 1 MB. The
		// thresholds judge the p99; the grid and the archive keep both.
		if p.RTTp99 > 0 {
			gauge(descRTT, p.RTTp99.Seconds(), append(labels, "p99")...)
			gauge(descRTTp99, p.RTTp99.Seconds(), labels...)
		}
		if p.RTTMean > 0 {
			gauge(descRTT, p.RTTMean.Seconds(), append(labels, "mean")...)
			gauge(descRTTMean, p.RTTMean.Seconds(), labels...)
		}
		// The last run's time is its own series only when that run did
		// not succeed: otherwise it is the last success, and a second
		// series saying the same would cost a fifth of a large scrape.
		if !p.At.IsZero() && !p.At.Equal(p.LastSuccess) {
			gauge(descResultTime, unixSeconds(p.At), labels...)
		}
		if !p.LastSuccess.IsZero() {
			gauge(descLastSuccess, unixSeconds(p.LastSuccess), labels...)
		}
	}
	seenThresh := map[string]bool{}
	for _, th := range s.Thresholds {
		if !tests[th.Test] || seenThresh[th.Test] {
			continue
		}
		seenThresh[th.Test] = true
		for _, l := range []struct {
			d     *prometheus.Desc
			v     float64
			level string
		}{
			{descGoodputThresh, th.GoodputAmberBps / 8, "amber"}, {descGoodputThresh, th.GoodputRedBps / 8, "red"},
			{descLossThresh, th.LossAmber, "amber"}, {descLossThresh, th.LossRed, "red"},
			{descRTTThresh, th.RTTAmber.Seconds(), "amber"}, {descRTTThresh, th.RTTRed.Seconds(), "red"},
		} {
			if l.v > 0 && finite(l.v) {
				gauge(l.d, l.v, th.Test, l.level)
			}
		}
		if th.Interval > 0 {
			gauge(descInterval, th.Interval.Seconds(), th.Test)
		}
	}
	seenPath := make(map[PathPair]bool, len(s.Traced))
	var hostChanges float64
	for p, n := range changes {
		if p.Src == s.Host {
			hostChanges += n
		}
	}
	for _, p := range s.Traced {
		if !hosts[p.Src] || !hosts[p.Dst] || !tests[p.Test] || seenPath[p] {
			droppedPairs++
			continue
		}
		seenPath[p] = true
		out = append(out, prometheus.MustNewConstMetric(descPathChanges, prometheus.CounterValue, changes[p], p.Src, p.Dst, p.Test))
	}
	if s.Host != "" {
		// Every colour is always shown, as every run state is.
		for _, c := range Colours {
			gauge(descPairs, float64(s.Colours[c]), s.Host, c)
		}
		out = append(out, prometheus.MustNewConstMetric(descHostPathChanges, prometheus.CounterValue, hostChanges, s.Host))
		if w := s.Worst; w != nil && hosts[w.Src] && hosts[w.Dst] && tests[w.Test] && slices.Contains(Colours, w.Colour) {
			dir := w.Direction
			if dir == "" {
				dir = Forward
			}
			gauge(descWorst, 1, w.Src, w.Dst, w.Test, string(dir), w.Colour)
		}
	}
	// Every state is always shown, 0 when no run is in it, so that an
	// alert on it has a series to work on from the start.
	for _, st := range States {
		gauge(descRuns, float64(s.Runs[st]), st)
	}
	for st := range s.Runs {
		if !slices.Contains(States, st) {
			droppedStates++
		}
	}
	for _, h := range s.Hosts {
		if d, ok := s.QueueDepth[h]; ok {
			gauge(descQueue, float64(d), h)
		}
	}
	for h := range s.QueueDepth {
		if !hosts[h] {
			droppedQueues++
		}
	}
	gauge(descDropped, float64(droppedPairs), "pair")
	gauge(descDropped, float64(droppedStates), "state")
	gauge(descDropped, float64(droppedQueues), "queue")
	return out
}

func set(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// unixSeconds is t in whole Unix seconds: finer than a result's time is
// worth, digits cost a large scrape some 30 kB.
func unixSeconds(t time.Time) float64 { return float64(t.Round(time.Second).Unix()) }
