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

// add lists runs this host's plan just stored, those not listed already.
func (q *dueRuns) add(runs []*taskstore.SchedRun) {
	q.mu.Lock()
	defer q.mu.Unlock()
	listed := make(map[string]bool, len(q.runs))
	for _, r := range q.runs {
		listed[r.ID] = true
	}
	for _, r := range runs {
		if r.State == archive.StateScheduled && !listed[r.ID] && q.queued[r.ID] == nil {
			q.runs = append(q.runs, r)
		}
	}
	sortRuns(q.runs)
}

// overdue takes off the list, queued or not, and returns the runs whose
// deadline is before t.
func (q *dueRuns) overdue(t time.Time) []*taskstore.SchedRun {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*taskstore.SchedRun
	keep := q.runs[:0]
	for _, r := range q.runs {
		if r.Deadline.Before(t) {
			out = append(out, r)
		} else {
			keep = append(keep, r)
		}
	}
	q.runs = keep
	for id, r := range q.queued {
		if r.Deadline.Before(t) {
			out = append(out, r)
			delete(q.queued, id)
		}
	}
	sortRuns(out)
	return out
}

// taken drops a queued run its worker has taken: it is no longer one to
// find overdue.
func (q *dueRuns) taken(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.queued, id)
}

// known is a queued run as the last plan read it, nil if it is not one
// (queued before a restart, or by a refresh since).
func (q *dueRuns) known(id string) *taskstore.SchedRun {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued[id]
}

// fullRefreshEvery is how many plans apart the planner reads its host's
// scheduled runs from the archive; in between it lists the runs it
// stores itself. The read is what brings back runs stored by another
// daemon of the same name, or before a restart (the first plan reads).
const fullRefreshEvery = 10

// refreshDue keeps the list of runs to queue: with full, from the
// archive's scheduled runs of this host up to the horizon; otherwise
// with the runs this plan added. Either way it records as missed the
// runs whose deadline passed notTakenGrace ago without a worker taking
// them (a worker that took one moved it on already, and the transition
// finds it no longer scheduled).
func (d *Daemon) refreshDue(ctx context.Context, full bool, added []*taskstore.SchedRun) error {
	now := d.cfg.Clock.Now()
	if full {
		runs, err := d.sched.SchedRuns(ctx, taskstore.RunQuery{Source: d.cfg.Host, States: []string{archive.StateScheduled},
			Until: now.Add(d.cfg.Horizon + d.cfg.Lead + enqueueEvery)})
		if err != nil {
			return err
		}
		d.due.refresh(runs)
	} else {
		d.due.add(added)
	}
	for _, r := range d.due.overdue(now.Add(-notTakenGrace)) {
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
	}
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
