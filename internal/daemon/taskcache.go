package daemon

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// taskList is the daemon's copy of every task, for the API's reads and
// the views: a 1,000-host sampled mesh's 5,000 tasks are 66 MB of rows
// and some 1.4 s of CPU to read, which every /api/schedule, /api/tasks,
// /grid and /metrics request paid. Each request now reads the tasks'
// version (taskstore.TasksVersion: a count and the latest update) and the
// tasks again only when it changed, or taskReload (the grid's fullReload)
// after the last load
// (a writer whose clock is behind may stamp an update before the latest).
// Requests that find the copy stale wait for one load, not one each. The
// lists are shared: nobody changes a task in them.
type taskList struct {
	mu       sync.Mutex
	tasks    []*schedule.Task // as taskstore.Store.Tasks orders them
	byID     []*schedule.Task // the same, by ID: the API's pages
	version  taskstore.TasksVersion
	loadedAt time.Time
}

const taskReload = fullReload

// get is every task, in the store's order and by ID.
func (c *taskList) get(ctx context.Context, store *taskstore.Store, now time.Time, log *slog.Logger) (tasks, byID []*schedule.Task, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := store.TasksVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	if c.tasks != nil && v == c.version && now.Sub(c.loadedAt) < taskReload && !now.Before(c.loadedAt) {
		return c.tasks, c.byID, nil
	}
	all, bad, err := store.ReadTasks(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	for _, err := range bad {
		log.Warn("task not shown: its stored row doesn't decode", "err", err)
	}
	ids := slices.Clone(all)
	slices.SortFunc(ids, func(a, b *schedule.Task) int { return strings.Compare(a.ID, b.ID) })
	c.tasks, c.byID, c.version, c.loadedAt = all, ids, v, now
	return all, ids, nil
}

// tasksOf is the tasks whose source is source ("" for all), in the
// store's order, from the daemon's copy.
func (d *Daemon) tasksOf(ctx context.Context, source string) ([]*schedule.Task, error) {
	all, _, err := d.tasks.get(ctx, d.sched, d.cfg.Clock.Now(), d.log)
	if err != nil || source == "" {
		return all, err
	}
	var out []*schedule.Task
	for _, t := range all {
		if t.Source == source {
			out = append(out, t)
		}
	}
	return out, nil
}
