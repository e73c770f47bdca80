package meshmetrics

import (
	"context"
	"errors"
	"math"
	"net/http"
	"runtime"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/testutil/promtest"
	"github.com/wireperf/wireperf/internal/version"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scrape reads the handler's /metrics as Prometheus does.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	return promtest.Scrape(t, h)
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// sample finds the family's sample with exactly these labels.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (*dto.Metric, bool) {
	f := fams[name]
	if f == nil {
		return nil, false
	}
	for _, m := range f.GetMetric() {
		got := labels(m)
		if len(got) != len(want) {
			continue
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if match {
			return m, true
		}
	}
	return nil, false
}

// testKinds are the test kinds the daemon gives New.
var testKinds = []string{"client", "rr", "udpmon", "trace", "ping", "tcp-connect"}

var base = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// meshSnapshot is three hosts with every ordered pair measured by a TCP
// test both ways and a UDP test forward, each pair with its own values.
func meshSnapshot() Snapshot {
	s := Snapshot{
		Hosts:      []string{"ams", "fra", "lon"},
		Tests:      []string{"tcp", "udp"},
		Runs:       map[string]int64{"finished": 40, "failed": 2, "missed": 1, "running": 3, "scheduled": 12, "paused": 5},
		QueueDepth: map[string]int64{"ams": 4, "fra": 0, "lon": 7, "gone": 9},
	}
	i := 0
	for _, src := range s.Hosts {
		for _, dst := range s.Hosts {
			if src == dst {
				continue
			}
			for _, dir := range []Direction{Forward, Reverse} {
				i++
				s.Pairs = append(s.Pairs, Pair{Src: src, Dst: dst, Test: "tcp", Direction: dir,
					At: base.Add(-time.Duration(i) * time.Minute), GoodputBps: float64(i) * 1e8, LostPercent: math.NaN(),
					RTTp50: time.Duration(i) * time.Millisecond, RTTp99: time.Duration(3*i) * time.Millisecond,
					LastSuccess: base.Add(-time.Duration(i) * time.Hour)})
			}
			i++
			s.Pairs = append(s.Pairs, Pair{Src: src, Dst: dst, Test: "udp",
				At: base.Add(-time.Duration(i) * time.Minute), GoodputBps: float64(i) * 1e6, LostPercent: float64(i) / 10,
				LastSuccess: base.Add(-time.Duration(i) * time.Hour)})
		}
	}
	// Outside the mesh: a removed host, an unknown test, a bad direction,
	// and a pair named twice.
	s.Pairs = append(s.Pairs,
		Pair{Src: "gone", Dst: "ams", Test: "tcp", GoodputBps: 1},
		Pair{Src: "ams", Dst: "fra", Test: "old", GoodputBps: 1},
		Pair{Src: "ams", Dst: "fra", Test: "tcp", Direction: "sideways", GoodputBps: 1},
		Pair{Src: "ams", Dst: "fra", Test: "tcp", GoodputBps: 1},
	)
	return s
}

func TestEveryPairIsScrapedWithItsValues(t *testing.T) {
	snap := meshSnapshot()
	calls := 0
	m := New("", testKinds, func(ctx context.Context) (Snapshot, error) {
		calls++
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the snapshot is read without a deadline")
		}
		return snap, nil
	}, 0)
	m.ObserveLag(base, base.Add(300*time.Millisecond))
	m.ObserveLag(base, base.Add(1500*time.Millisecond))
	m.ObserveLag(base, base.Add(-time.Second)) // early: counts as 0
	m.ObserveLag(base, base.Add(4*time.Second))
	fams := scrape(t, m.Handler())
	if calls != 1 {
		t.Errorf("the snapshot was read %d times in one scrape, want 1", calls)
	}

	// Every metric is documented by its help and typed.
	types := map[string]dto.MetricType{
		"wireperf_mesh_goodput_bits_per_second":        dto.MetricType_GAUGE,
		"wireperf_mesh_goodput_bytes_per_second":       dto.MetricType_GAUGE,
		"wireperf_mesh_rtt_seconds":                    dto.MetricType_GAUGE,
		"wireperf_mesh_runs_total":                     dto.MetricType_COUNTER,
		"wireperf_build_info":                          dto.MetricType_GAUGE,
		"wireperf_mesh_loss_ratio":                     dto.MetricType_GAUGE,
		"wireperf_mesh_rtt_p99_seconds":                dto.MetricType_GAUGE,
		"wireperf_mesh_result_timestamp_seconds":       dto.MetricType_GAUGE,
		"wireperf_mesh_last_success_timestamp_seconds": dto.MetricType_GAUGE,
		"wireperf_mesh_runs":                           dto.MetricType_GAUGE,
		"wireperf_mesh_queue_depth":                    dto.MetricType_GAUGE,
		"wireperf_mesh_snapshot_dropped":               dto.MetricType_GAUGE,
		"wireperf_mesh_schedule_lag_seconds":           dto.MetricType_HISTOGRAM,
		"go_goroutines":                                dto.MetricType_GAUGE,
		"go_memstats_heap_alloc_bytes":                 dto.MetricType_GAUGE,
		"promhttp_metric_handler_requests_total":       dto.MetricType_COUNTER,
	}
	if runtime.GOOS == "linux" {
		types["process_cpu_seconds_total"] = dto.MetricType_COUNTER
		types["process_resident_memory_bytes"] = dto.MetricType_GAUGE
	}
	for name, typ := range types {
		f := fams[name]
		if f == nil {
			t.Errorf("%s is missing", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("%s is a %v, want a %v", name, f.GetType(), typ)
		}
		if len(f.GetHelp()) < 15 {
			t.Errorf("%s has no help worth the name: %q", name, f.GetHelp())
		}
	}

	// Every pair, with its own values, and nothing else.
	value := func(name string, l map[string]string) (float64, bool) {
		m, ok := sample(fams, name, l)
		return m.GetGauge().GetValue(), ok
	}
	for _, p := range snap.Pairs[:len(snap.Pairs)-4] {
		dir := p.Direction
		if dir == "" {
			dir = Forward
		}
		l := map[string]string{"src": p.Src, "dst": p.Dst, "test": p.Test, "direction": string(dir)}
		check := func(name string, want float64, present bool) {
			got, ok := value(name, l)
			switch {
			case ok != present:
				t.Errorf("%s%v: present %v, want %v", name, l, ok, present)
			case ok && math.Abs(got-want) > 1e-9*math.Abs(want):
				t.Errorf("%s%v = %v, want %v", name, l, got, want)
			}
		}
		check("wireperf_mesh_goodput_bytes_per_second", p.GoodputBps/8, true)
		check("wireperf_mesh_goodput_bits_per_second", p.GoodputBps, true) // deprecated
		p99 := map[string]string{"src": p.Src, "dst": p.Dst, "test": p.Test, "direction": string(dir), "statistic": "p99"}
		if got, ok := value("wireperf_mesh_rtt_seconds", p99); ok != (p.RTTp99 > 0) || got != p.RTTp99.Seconds() {
			t.Errorf("wireperf_mesh_rtt_seconds%v = %v (present %v), want %v", p99, got, ok, p.RTTp99.Seconds())
		}
		check("wireperf_mesh_loss_ratio", p.LostPercent/100, !math.IsNaN(p.LostPercent))
		check("wireperf_mesh_rtt_p50_seconds", 0, false) // not exported, to keep a scrape small
		check("wireperf_mesh_rtt_p99_seconds", p.RTTp99.Seconds(), p.RTTp99 > 0)
		check("wireperf_mesh_result_timestamp_seconds", float64(p.At.Unix()), true)
		check("wireperf_mesh_last_success_timestamp_seconds", float64(p.LastSuccess.Unix()), true)
	}
	// 6 ordered pairs × (tcp both ways + udp forward).
	if n := len(fams["wireperf_mesh_goodput_bits_per_second"].GetMetric()); n != 18 {
		t.Errorf("%d goodput series, want 18 (every ordered pair of 3 hosts, tcp both ways, udp forward)", n)
	}
	if v, _ := value("wireperf_mesh_goodput_bits_per_second", map[string]string{"src": "ams", "dst": "fra", "test": "tcp", "direction": "forward"}); v != 1e8 {
		t.Errorf("the pair named twice shows %v, want its first values", v)
	}

	for _, st := range States {
		got, ok := value("wireperf_mesh_runs", map[string]string{"state": st})
		if !ok || got != float64(snap.Runs[st]) {
			t.Errorf("runs in state %s: %v (present %v), want %d", st, got, ok, snap.Runs[st])
		}
	}
	if n := len(fams["wireperf_mesh_runs"].GetMetric()); n != len(States) {
		t.Errorf("%d run states shown, want %d", n, len(States))
	}
	for _, h := range snap.Hosts {
		if got, ok := value("wireperf_mesh_queue_depth", map[string]string{"host": h}); !ok || got != float64(snap.QueueDepth[h]) {
			t.Errorf("queue depth of %s: %v, want %d", h, got, snap.QueueDepth[h])
		}
	}
	if _, ok := value("wireperf_mesh_queue_depth", map[string]string{"host": "gone"}); ok {
		t.Error("a host outside the mesh has a queue depth")
	}
	for kind, want := range map[string]float64{"pair": 4, "state": 1, "queue": 1} {
		if got, _ := value("wireperf_mesh_snapshot_dropped", map[string]string{"kind": kind}); got != want {
			t.Errorf("dropped %s: %v, want %v", kind, got, want)
		}
	}

	h := fams["wireperf_mesh_schedule_lag_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 4 || math.Abs(h.GetSampleSum()-5.8) > 1e-9 {
		t.Errorf("lag histogram: %d samples summing to %v, want 4 summing to 5.8", h.GetSampleCount(), h.GetSampleSum())
	}
	for _, b := range h.GetBucket() {
		want := uint64(0)
		for _, lag := range []float64{0.3, 1.5, 0, 4} {
			if lag <= b.GetUpperBound() {
				want++
			}
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("lag bucket le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

// A snapshot that fails leaves the mesh out but keeps the rest of the
// page, and the handler counts the error.
func TestFailedSnapshot(t *testing.T) {
	m := New("", testKinds, func(context.Context) (Snapshot, error) { return Snapshot{}, errors.New("archive unreachable") }, time.Second)
	fams := scrape(t, m.Handler())
	if fams["wireperf_mesh_runs"] != nil || fams["go_goroutines"] == nil {
		t.Errorf("after a failed snapshot: runs %v, go_goroutines %v; want none and some", fams["wireperf_mesh_runs"] != nil, fams["go_goroutines"] != nil)
	}
	// The error is counted by the scrape after it.
	fams = scrape(t, m.Handler())
	got, ok := sample(fams, "promhttp_metric_handler_errors_total", map[string]string{"cause": "gathering"})
	if !ok || got.GetCounter().GetValue() < 1 {
		t.Errorf("gathering errors: %v", got)
	}
}

// An empty mesh scrapes cleanly: every run state at 0, no pair.
func TestEmptyMesh(t *testing.T) {
	m := New("", testKinds, func(context.Context) (Snapshot, error) { return Snapshot{}, nil }, 0)
	fams := scrape(t, m.Handler())
	if fams["wireperf_mesh_goodput_bits_per_second"] != nil {
		t.Error("an empty mesh has goodput series")
	}
	for _, st := range States {
		if got, ok := sample(fams, "wireperf_mesh_runs", map[string]string{"state": st}); !ok || got.GetGauge().GetValue() != 0 {
			t.Errorf("state %s: %v", st, got)
		}
	}
}

// Each traced pair's path changes are a counter with the pair's labels,
// counted by the daemon as it records them (an archive pruned of old paths
// lowers no counter); a traced pair not changed since the start is at 0,
// and a pair or test the mesh does not name is dropped and counted.
func TestPathChanges(t *testing.T) {
	s := Snapshot{Hosts: []string{"ams", "fra"}, Tests: []string{"path"}, Runs: map[string]int64{},
		Traced: []PathPair{
			{Src: "ams", Dst: "fra", Test: "path"},
			{Src: "fra", Dst: "ams", Test: "path"},
			{Src: "ams", Dst: "gone", Test: "path"},
			{Src: "ams", Dst: "fra", Test: "old"},
		}}
	m := New("ams", testKinds, func(context.Context) (Snapshot, error) { return s, nil }, 0)
	for range 3 {
		m.PathChanged(PathPair{Src: "ams", Dst: "fra", Test: "path"})
	}
	m.PathChanged(PathPair{Src: "ams", Dst: "gone", Test: "path"})
	fams := scrape(t, m.Handler())
	for _, c := range []struct {
		src, dst string
		want     float64
	}{{"ams", "fra", 3}, {"fra", "ams", 0}} {
		got, ok := sample(fams, "wireperf_mesh_path_changes_total", map[string]string{"src": c.src, "dst": c.dst, "test": "path"})
		if !ok || got.GetCounter().GetValue() != c.want {
			t.Errorf("%s→%s: %v, want a counter at %v", c.src, c.dst, got, c.want)
		}
	}
	if n := len(fams["wireperf_mesh_path_changes_total"].GetMetric()); n != 2 {
		t.Errorf("%d path change series, want 2", n)
	}
	if got, ok := sample(fams, "wireperf_mesh_snapshot_dropped", map[string]string{"kind": "pair"}); !ok || got.GetGauge().GetValue() != 2 {
		t.Errorf("dropped pairs: %v, want 2", got)
	}
	// The archive forgets the pair's paths (a prune): the counter stays.
	s.Traced = s.Traced[:2]
	fams = scrape(t, m.Handler())
	if got, ok := sample(fams, "wireperf_mesh_path_changes_total", map[string]string{"src": "ams", "dst": "fra", "test": "path"}); !ok || got.GetCounter().GetValue() != 3 {
		t.Errorf("after a prune: %v, want 3", got)
	}
}

// Runs are counted as the daemon ends them, by kind and outcome, every
// pair of the two present from the start; a kind this build does not
// know is "other", and the running gauge follows starts and ends.
func TestRunsAreCountedAsTheyEnd(t *testing.T) {
	m := New("ams", testKinds, func(context.Context) (Snapshot, error) { return Snapshot{}, nil }, 0)
	fams := scrape(t, m.Handler())
	for _, k := range testKinds {
		for _, o := range Outcomes {
			if got, ok := sample(fams, "wireperf_mesh_runs_total", map[string]string{"host": "ams", "kind": k, "outcome": o}); !ok || got.GetCounter().GetValue() != 0 {
				t.Errorf("%s %s before any run: %v, want 0", k, o, got)
			}
		}
	}
	m.RunStarted()
	m.RunStarted()
	m.RunEnded("client", "finished", true)
	m.RunEnded("client", "failed", false)
	m.RunEnded("ping-of-a-later-build", "missed", false)
	m.RunEnded("client", "running", false) // no outcome: not counted
	fams = scrape(t, m.Handler())
	for _, c := range []struct {
		kind, outcome string
		want          float64
	}{{"client", "finished", 1}, {"client", "failed", 1}, {"other", "missed", 1}, {"rr", "finished", 0}} {
		got, ok := sample(fams, "wireperf_mesh_runs_total", map[string]string{"host": "ams", "kind": c.kind, "outcome": c.outcome})
		if !ok || got.GetCounter().GetValue() != c.want {
			t.Errorf("%s %s: %v, want %v", c.kind, c.outcome, got, c.want)
		}
	}
	if got, ok := sample(fams, "wireperf_mesh_running_runs", map[string]string{"host": "ams"}); !ok || got.GetGauge().GetValue() != 1 {
		t.Errorf("running: %v, want 1", got)
	}
	if n := len(fams["wireperf_mesh_runs_total"].GetMetric()); n != len(testKinds)*len(Outcomes)+1 {
		t.Errorf("%d run counters, want %d", n, len(testKinds)*len(Outcomes)+1)
	}
	if got, ok := sample(fams, "wireperf_build_info", map[string]string{"host": "ams", "version": version.Get().Release, "revision": version.Get().Commit, "goversion": runtime.Version()}); !ok || got.GetGauge().GetValue() != 1 {
		t.Errorf("build info: %v", fams["wireperf_build_info"])
	}
}

// Thresholds and intervals are one series per test and level set; a
// threshold not set and a test the mesh does not name are left out.
func TestThresholds(t *testing.T) {
	s := Snapshot{Hosts: []string{"ams"}, Tests: []string{"tcp", "rr"}, Thresholds: []Thresholds{
		{Test: "tcp", GoodputAmberBps: 5e8, GoodputRedBps: 1e8, Interval: time.Hour},
		{Test: "rr", LossRed: 0.01, RTTAmber: 20 * time.Millisecond},
		{Test: "gone", GoodputRedBps: 1},
	}}
	m := New("ams", testKinds, func(context.Context) (Snapshot, error) { return s, nil }, 0)
	fams := scrape(t, m.Handler())
	for _, c := range []struct {
		name, test, level string
		want              float64
	}{
		{"wireperf_mesh_goodput_threshold_bytes_per_second", "tcp", "amber", 5e8 / 8},
		{"wireperf_mesh_goodput_threshold_bytes_per_second", "tcp", "red", 1e8 / 8},
		{"wireperf_mesh_loss_threshold_ratio", "rr", "red", 0.01},
		{"wireperf_mesh_rtt_threshold_seconds", "rr", "amber", 0.02},
	} {
		if got, ok := sample(fams, c.name, map[string]string{"test": c.test, "level": c.level}); !ok || got.GetGauge().GetValue() != c.want {
			t.Errorf("%s{test=%s,level=%s}: %v, want %v", c.name, c.test, c.level, got, c.want)
		}
	}
	n := 0
	for _, name := range []string{"wireperf_mesh_goodput_threshold_bytes_per_second", "wireperf_mesh_loss_threshold_ratio", "wireperf_mesh_rtt_threshold_seconds"} {
		n += len(fams[name].GetMetric())
	}
	if n != 4 {
		t.Errorf("%d threshold series, want 4", n)
	}
	if got, ok := sample(fams, "wireperf_mesh_test_interval_seconds", map[string]string{"test": "tcp"}); !ok || got.GetGauge().GetValue() != 3600 || len(fams["wireperf_mesh_test_interval_seconds"].GetMetric()) != 1 {
		t.Errorf("interval: %v", fams["wireperf_mesh_test_interval_seconds"])
	}
}

// The host's aggregates: its pairs by colour (every colour shown), its
// worst pair, and its paths' changes summed over its pairs only.
func TestHostAggregates(t *testing.T) {
	s := Snapshot{Host: "ams", Hosts: []string{"ams", "fra", "lon"}, Tests: []string{"tcp", "path"}, Runs: map[string]int64{},
		Colours: map[string]int64{"green": 3, "red": 1, "unmeasured": 2},
		Worst:   &WorstPair{Src: "ams", Dst: "lon", Test: "tcp", Colour: "red"},
		Traced:  []PathPair{{Src: "ams", Dst: "fra", Test: "path"}, {Src: "ams", Dst: "lon", Test: "path"}, {Src: "fra", Dst: "ams", Test: "path"}},
		Pairs:   []Pair{{Src: "ams", Dst: "fra", Test: "tcp", At: base, GoodputBps: 9e8, LostPercent: math.NaN(), RTTMean: 12 * time.Millisecond, LastSuccess: base}}}
	m := New("ams", testKinds, func(context.Context) (Snapshot, error) { return s, nil }, 0)
	for _, p := range []PathPair{{"ams", "fra", "path"}, {"ams", "fra", "path"}, {"ams", "fra", "path"}, {"ams", "lon", "path"}, {"ams", "lon", "path"}, {"ams", "lon", "path"}, {"ams", "lon", "path"}} {
		m.PathChanged(p)
	}
	m.PathChanged(PathPair{"fra", "ams", "path"}) // another host's: not this host's total
	fams := scrape(t, m.Handler())
	for _, c := range Colours {
		got, ok := sample(fams, "wireperf_mesh_pairs", map[string]string{"host": "ams", "colour": c})
		if !ok || got.GetGauge().GetValue() != float64(s.Colours[c]) {
			t.Errorf("pairs %s: %v, want %d", c, got, s.Colours[c])
		}
	}
	if _, ok := sample(fams, "wireperf_mesh_worst_pair_info", map[string]string{"src": "ams", "dst": "lon", "test": "tcp", "direction": "forward", "colour": "red"}); !ok {
		t.Errorf("worst pair: %v", fams["wireperf_mesh_worst_pair_info"])
	}
	if got, ok := sample(fams, "wireperf_mesh_host_path_changes_total", map[string]string{"host": "ams"}); !ok || got.GetCounter().GetValue() != 7 {
		t.Errorf("host path changes: %v, want 7", got)
	}
	// A TCP test's RTT is its mean, and no percentile.
	l := map[string]string{"src": "ams", "dst": "fra", "test": "tcp", "direction": "forward"}
	if got, ok := sample(fams, "wireperf_mesh_rtt_mean_seconds", l); !ok || got.GetGauge().GetValue() != 0.012 {
		t.Errorf("mean RTT: %v, want 0.012", got)
	}
	for _, name := range []string{"wireperf_mesh_rtt_p50_seconds", "wireperf_mesh_rtt_p99_seconds"} {
		if _, ok := sample(fams, name, l); ok {
			t.Errorf("%s exported for a TCP test", name)
		}
	}
	// Its last run succeeded: the result's time is the last success's.
	if _, ok := sample(fams, "wireperf_mesh_result_timestamp_seconds", l); ok {
		t.Error("a result timestamp equal to the last success is exported")
	}
	if got, ok := sample(fams, "wireperf_mesh_last_success_timestamp_seconds", l); !ok || got.GetGauge().GetValue() != float64(base.Unix()) {
		t.Errorf("last success: %v", got)
	}

	// Without a host, no aggregates.
	s.Host = ""
	fams = scrape(t, m.Handler())
	for _, name := range []string{"wireperf_mesh_pairs", "wireperf_mesh_worst_pair_info", "wireperf_mesh_host_path_changes_total"} {
		if fams[name] != nil {
			t.Errorf("%s exported without a host", name)
		}
	}
}
