package daemon

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/meshmetrics"
	"github.com/wireperf/wireperf/internal/schedule"
)

// newMetrics is the daemon's registry: the mesh's metrics, and the
// archive's and the API's state as this daemon sees it, each labelled
// with its host as the mesh's aggregates are.
func (d *Daemon) newMetrics() *meshmetrics.Metrics {
	var kinds []string
	for _, k := range measure.Kinds {
		kinds = append(kinds, string(k))
	}
	m := meshmetrics.New(d.cfg.Host, kinds, d.metricsSnapshot, meshmetrics.DefaultTimeout)
	host := prometheus.Labels{"host": d.cfg.Host}
	m.Registry().MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wireperf_archive_up", ConstLabels: host,
			Help: "1 when the archive answered this daemon's last request, 0 while it is unreachable (results are spooled meanwhile)."},
			func() float64 {
				if d.archiveUp.Load() {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wireperf_spooled_runs", ConstLabels: host,
			Help: "Runs that ended while the archive was unreachable, waiting in this daemon's spool to be recorded."},
			func() float64 { return float64(d.spool.count()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wireperf_api_schedule_runs_built_total", ConstLabels: host,
			Help: "Runs /api/schedule's pages computed: each page's cost, about its length and a few runs a task."},
			func() float64 { return float64(d.scheduleBuilt.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wireperf_api_requests_abandoned_total", ConstLabels: host,
			Help: "API requests whose work stopped because the client went or the request's time ran out."},
			func() float64 { return float64(d.abandoned.Load()) }),
	)
	return m
}

// taskKind is the kind of test a task runs (its command), for
// wireperf_mesh_runs_total; "" when it has none.
func taskKind(t *schedule.Task) string {
	if t == nil || len(t.Args) == 0 {
		return ""
	}
	return t.Args[0]
}

// countMissed counts a run of the task taskID that was missed before a
// worker took it: the task is read for its kind (a removed one's is
// counted as "other").
func (d *Daemon) countMissed(ctx context.Context, taskID string) {
	t, err := d.sched.GetTask(ctx, taskID)
	if err != nil {
		t = nil
	}
	d.metrics.RunEnded(taskKind(t), archive.StateMissed, false)
}
