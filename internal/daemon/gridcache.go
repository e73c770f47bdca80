package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/taskstore"
)

// lastResults is the grid's copy of each pair's last run, so that a
// request of /grid reads the runs that changed since the one before,
// not every pair's history. It is loaded whole from the scheduled pairs
// (taskstore.ScheduledLastResults: a few index rows a pair) at the first
// request and every fullReload after, and between those brought up to
// date with the runs updated since the newest update it has read, less
// updateOverlap (archive.ResultsUpdatedSince, through sched_run_updated).
// The archive stays the truth: every daemon's copy converges on it, and
// one that restarts reloads it.
type lastResults struct {
	mu       sync.Mutex
	pairs    map[taskstore.PairKey]cachedPair
	loadedAt time.Time // the daemon's clock at the last whole load
	seen     time.Time // the newest update read, at most the clock then
}

// cachedPair is a pair-direction's last run, and the end of its latest
// success (the latest end of a finished run, as LastResults has it).
type cachedPair struct {
	last        taskstore.GridRun
	lastSuccess time.Time
}

const (
	// fullReload bounds how long a run the incremental reads missed (a
	// writer whose clock is more than updateOverlap behind) or a pair
	// whose task was removed stays in the copy.
	fullReload = 10 * time.Minute
	// updateOverlap is read again at each update: runs are stamped with
	// their writer's clock, and a transaction may commit after a later
	// stamp was read. Re-reading a run changes nothing.
	updateOverlap = 2 * time.Minute
)

// refresh brings the copy up to date with store at now. ScheduledLastResults
// lists the pairs of each task's first destination only: a rotating task's
// other pairs (a sampled group's partners over its rotation) come from the
// runs updated in the last rotating (at the first load; at most
// HistoryWindow, so that the load stays bounded), and each later reload keeps
// the pairs keep still shows that it did not list.
func (c *lastResults) refresh(ctx context.Context, store *taskstore.Store, now time.Time, rotating time.Duration, keep func(taskstore.PairKey) bool) error {
	if c.pairs == nil || now.Sub(c.loadedAt) >= fullReload || now.Before(c.loadedAt) {
		// Runs updated while the load reads are read again by the next
		// update, which starts updateOverlap before this instant.
		runs, err := store.ScheduledLastResults(ctx)
		if err != nil {
			return err
		}
		fresh := make(map[taskstore.PairKey]cachedPair, max(len(runs), len(c.pairs)))
		for _, r := range runs {
			fresh[r.PairKey] = cachedPair{last: r, lastSuccess: r.LastSuccess}
		}
		if c.pairs == nil && rotating > 0 {
			recent, err := store.ResultsUpdatedSince(ctx, now.Add(-min(rotating, HistoryWindow)))
			if err != nil {
				return err
			}
			for _, r := range recent {
				fresh[r.PairKey] = merged(fresh[r.PairKey], r)
			}
		}
		for k, p := range c.pairs {
			if _, listed := fresh[k]; !listed && keep(k) {
				fresh[k] = p
			}
		}
		c.pairs = fresh
		c.loadedAt, c.seen = now, now
		return nil
	}
	runs, err := store.ResultsUpdatedSince(ctx, c.seen.Add(-updateOverlap))
	if err != nil {
		return err
	}
	for _, r := range runs {
		c.pairs[r.PairKey] = merged(c.pairs[r.PairKey], r)
		if r.Updated.After(c.seen) {
			c.seen = r.Updated
		}
	}
	if c.seen.After(now) {
		c.seen = now // a writer's clock ahead of ours must not hide the others' runs
	}
	return nil
}

// merged is p with run r read: r is its last run if newer (or p had
// none), and its success counts.
func merged(p cachedPair, r taskstore.GridRun) cachedPair {
	if p.last.ID == "" || r.ID == p.last.ID || newerRun(r, p.last) {
		p.last = r
	}
	if r.LastSuccess.After(p.lastSuccess) {
		p.lastSuccess = r.LastSuccess
	}
	return p
}

// newerRun says whether a comes after b among a pair's runs: by planned
// start, then by ID, as LastResults orders them.
func newerRun(a, b taskstore.GridRun) bool {
	if !a.Planned.Equal(b.Planned) {
		return a.Planned.After(b.Planned)
	}
	return a.ID > b.ID
}

// each refreshes the copy from store (rotating: the longest rotation of
// the tasks' rotating ones, 0 if none) and calls f with every pair's last
// run that keep says is scheduled, the copy locked meanwhile.
func (c *lastResults) each(ctx context.Context, store *taskstore.Store, now time.Time, rotating time.Duration, keep func(taskstore.PairKey) bool, f func(taskstore.PairKey, taskstore.PairStatus)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(ctx, store, now, rotating, keep); err != nil {
		return err
	}
	for k, p := range c.pairs {
		if keep(k) {
			s := p.last.PairStatus
			s.LastSuccess = p.lastSuccess
			f(k, s)
		}
	}
	return nil
}
