package daemon

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// dueRuns is this host's scheduled runs that come due before the next
// plan, as the archive gave them at the last plan. The queue is fed
// from it every second without asking the archive: at 1,000 hosts a
// query a second per daemon was a thousand queries a second for
// answers that change only when the planner runs.
type dueRuns struct {
	mu   sync.Mutex
	runs []*taskstore.SchedRun // not yet queued, by planned start
	// queued is the runs queued since the last refresh that were still
	// scheduled then: their workers read them here (known), not from the
	// archive.
	queued map[string]*taskstore.SchedRun
}

// refresh replaces the list with runs, the archive's scheduled runs of
// this host, keeping out those queued already.
func (q *dueRuns) refresh(runs []*taskstore.SchedRun) {
	q.mu.Lock()
	defer q.mu.Unlock()
	still := make(map[string]*taskstore.SchedRun, len(q.queued))
	q.runs = q.runs[:0]
	for _, r := range runs {
		if q.queued[r.ID] != nil {
			still[r.ID] = r
			continue
		}
		q.runs = append(q.runs, r)
	}
	q.queued = still
	sortRuns(q.runs)
}

// due returns the runs whose job is due at now (planned within lead).
func (q *dueRuns) due(now time.Time, lead time.Duration) []*taskstore.SchedRun {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := sort.Search(len(q.runs), func(i int) bool { return q.runs[i].Planned.After(now.Add(lead)) })
	return append([]*taskstore.SchedRun(nil), q.runs[:n]...)
}

// done marks r queued.
func (q *dueRuns) done(r *taskstore.SchedRun) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, x := range q.runs {
		if x.ID == r.ID {
			q.runs = append(q.runs[:i], q.runs[i+1:]...)
			break
		}
	}
	if q.queued == nil {
		q.queued = map[string]*taskstore.SchedRun{}
	}
	q.queued[r.ID] = r
}

// known is a queued run as the last plan read it, nil if it is not one
// (queued before a restart, or by a refresh since).
func (q *dueRuns) known(id string) *taskstore.SchedRun {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued[id]
}

// refreshDue reads this host's scheduled runs planned before the next
// plan's queueing can see them (PlanEvery and Lead ahead, and a tick),
// records as missed those a worker never took, and keeps the rest for
// enqueueDue.
func (d *Daemon) refreshDue(ctx context.Context) error {
	now := d.cfg.Clock.Now()
	runs, err := d.sched.SchedRuns(ctx, taskstore.RunQuery{Source: d.cfg.Host, States: []string{archive.StateScheduled},
		Until: now.Add(d.cfg.PlanEvery + d.cfg.Lead + enqueueEvery)})
	if err != nil {
		return err
	}
	keep := runs[:0]
	for _, r := range runs {
		// A worker waiting for a reservation gives up at the deadline
		// itself and records why; only a run still scheduled a while
		// after it was never taken.
		if r.Deadline.Add(notTakenGrace).Before(now) {
			why := "not taken before its deadline: the daemon was not running or its queue was late"
			if down := d.lastDown.Load(); down != 0 && !time.Unix(0, down).Before(r.Planned) {
				why = "not taken before its deadline: the archive was unreachable"
			}
			if ok, err := d.sched.Transition(ctx, r.ID, []string{archive.StateScheduled}, archive.StateMissed,
				why, time.Time{}, time.Time{}, now); err != nil {
				return err
			} else if ok {
				d.countMissed(ctx, r.TaskID)
				d.log.Warn("run missed", "run", r.ID, "planned", r.Planned)
			}
			continue
		}
		keep = append(keep, r)
	}
	d.due.refresh(keep)
	return nil
}

// enqueueDue gives the runs due within Lead their jobs, available at
// once (River keeps one job per run, so a run queued again after a
// restart adds nothing): a job is never left to River's scheduler, which
// makes scheduled jobs available only every 5 s, on its leader.
func (d *Daemon) enqueueDue(ctx context.Context) error {
	now := d.cfg.Clock.Now()
	due := d.due.due(now, d.cfg.Lead)
	if len(due) == 0 {
		return nil
	}
	ids := make([]string, len(due))
	for i, r := range due {
		ids[i] = r.ID
	}
	if err := d.queue.Enqueue(ctx, d.cfg.Host, ids...); err != nil {
		return fmt.Errorf("queueing %d runs from %s: %w", len(ids), ids[0], err)
	}
	for _, r := range due {
		d.due.done(r)
	}
	return nil
}
