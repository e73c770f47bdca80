package daemon

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// enqueueEvery is how often runs coming due get their jobs.
const enqueueEvery = time.Second

// notTakenGrace is how long past its deadline a run may stay scheduled
// before it is recorded as never taken: the worker that holds it records
// its own reason at the deadline (it had been recorded "not taken" while
// its worker waited for a host).
const notTakenGrace = 5 * time.Second

// planLoop plans this host's tasks now and every PlanEvery, and every
// second queues the runs due within Lead (from the list the last plan
// read), until ctx ends.
func (d *Daemon) planLoop(ctx context.Context) {
	ticks, stop := d.cfg.Clock.Every(enqueueEvery)
	defer stop()
	plans := planTimer{host: d.cfg.Host, every: d.cfg.PlanEvery}
	for {
		var err error
		if plans.due(d.cfg.Clock.Now()) {
			err = d.PlanOnce(ctx)
		} else {
			err = d.enqueueDue(ctx)
		}
		if err != nil && ctx.Err() == nil {
			// While the archive is unreachable, that is said once (by
			// archiveError), not every second.
			if d.archiveError(ctx, err) == nil {
				d.log.Error("planning failed", "err", err)
			}
		} else if err == nil && !d.archiveUp.Swap(true) {
			d.log.Info("the archive answers again")
		}
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// planTimer says when a host plans: at once, then every PlanEvery, the
// second plan planPhase early once. Daemons started together (a mesh
// restarted at once) would otherwise plan together every PlanEvery, in
// one burst of queries that delays every run starting meanwhile.
type planTimer struct {
	host  string
	every time.Duration
	last  time.Time // the last plan, less the phase after the first
}

// due reports whether a plan is due at now, and if so counts it made.
func (p *planTimer) due(now time.Time) bool {
	if !p.last.IsZero() && now.Sub(p.last) < p.every {
		return false
	}
	if p.last.IsZero() {
		p.last = now.Add(-planPhase(p.host, p.every))
	} else {
		p.last = now
	}
	return true
}

// planPhase is how much earlier than PlanEvery a host's second plan
// comes: a fraction of half of PlanEvery that its name picks, so that
// hosts keep to different phases.
func planPhase(host string, every time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(host))
	return time.Duration(h.Sum64() % uint64(every/2+1))
}

// spoolEvery is how often spooled results are offered to the archive.
const spoolEvery = 5 * time.Second

// spoolLoop records spooled results every spoolEvery until ctx ends.
func (d *Daemon) spoolLoop(ctx context.Context) {
	ticks, stop := d.cfg.Clock.Every(spoolEvery)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		if d.spool.count() > 0 {
			d.flushSpool(ctx)
		}
	}
}

// plannedTask is a task as the last plan read it, nil if it read none
// of that ID.
func (d *Daemon) plannedTask(id string) *schedule.Task {
	if m := d.planned.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// PlanOnce plans this host's tasks up to the horizon: new runs are
// stored and get a job on this host's queue; runs whose time passed while
// nobody planned them, and planned runs whose deadline passed without a
// worker taking them, are recorded missed. Planning twice adds nothing.
func (d *Daemon) PlanOnce(ctx context.Context) error {
	now := d.cfg.Clock.Now()
	// The months the plan reaches get their run partitions now rather
	// than at a run's first store (PostgreSQL; nothing on SQLite).
	if err := d.store.EnsureRunPartitions(ctx, now, now.Add(d.cfg.Horizon)); err != nil {
		return err
	}
	tasks, seqs, bad, err := d.sched.PlanTasks(ctx, d.cfg.Host)
	if err != nil {
		return err
	}
	for _, err := range bad {
		d.log.Warn("task skipped: its stored row doesn't decode; apply it again or remove it", "err", err)
	}
	byID := make(map[string]*schedule.Task, len(tasks))
	var rows []*taskstore.SchedRun
	for _, t := range tasks {
		byID[t.ID] = t
		last, ok := seqs[t.ID]
		if !ok {
			last = -1
		}
		toRun, missed := schedule.Plan(t, last, now, d.cfg.Horizon)
		for _, r := range missed {
			sr := taskstore.NewSchedRun(t, r)
			sr.State, sr.Reason = archive.StateMissed, fmt.Sprintf("not planned before its deadline: the daemon of %s was not running", t.Source)
			rows = append(rows, sr)
		}
		for _, r := range toRun {
			rows = append(rows, taskstore.NewSchedRun(t, r))
		}
	}
	d.planned.Store(&byID)
	// Every task's new runs in one transaction, and none when there are
	// none: most plans of a task with a repeat longer than PlanEvery add
	// nothing.
	var added []*taskstore.SchedRun
	if len(rows) > 0 {
		if added, err = d.sched.PlanRuns(ctx, rows, now); err != nil {
			return err
		}
		for _, r := range added {
			if r.State == archive.StateMissed {
				d.metrics.RunEnded(taskKind(byID[r.TaskID]), archive.StateMissed, false)
			}
		}
	}
	full := d.plans.Add(1)%fullRefreshEvery == 1
	if err := d.refreshDue(ctx, full, added); err != nil {
		return err
	}
	return d.enqueueDue(ctx)
}

func sortRuns(rs []*taskstore.SchedRun) {
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].Planned.Equal(rs[j].Planned) {
			return rs[i].Planned.Before(rs[j].Planned)
		}
		return rs[i].ID < rs[j].ID
	})
}
