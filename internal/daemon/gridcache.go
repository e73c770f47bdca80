package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// lastResults is the grid's copy of each pair's last run, so that a
// request of /grid reads the runs that changed since the one before,
// not every pair's history. It is loaded whole from the scheduled pairs
// (archive.ScheduledLastResults: one index lookup a task) at the first
// request and every fullReload after, and between those brought up to
// date with the runs updated since the newest update it has read, less
// updateOverlap (archive.ResultsUpdatedSince, through sched_run_updated).
// The archive stays the truth: every daemon's copy converges on it, and
// one that restarts reloads it.
type lastResults struct {
	mu       sync.Mutex
	pairs    map[archive.PairKey]cachedPair
	loadedAt time.Time // the daemon's clock at the last whole load
	seen     time.Time // the newest update read, at most the clock then
}

// cachedPair is a pair-direction's last run, and the end of its latest
// success (the latest end of a finished run, as LastResults has it).
type cachedPair struct {
	last        archive.GridRun
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

// refresh brings the copy up to date with store at now.
func (c *lastResults) refresh(ctx context.Context, store *archive.Store, now time.Time) error {
	if c.pairs == nil || now.Sub(c.loadedAt) >= fullReload || now.Before(c.loadedAt) {
		// Runs updated while the load reads are read again by the next
		// update, which starts updateOverlap before this instant.
		runs, err := store.ScheduledLastResults(ctx)
		if err != nil {
			return err
		}
		c.pairs = make(map[archive.PairKey]cachedPair, len(runs))
		for _, r := range runs {
			c.pairs[r.PairKey] = cachedPair{last: r, lastSuccess: r.LastSuccess}
		}
		c.loadedAt, c.seen = now, now
		return nil
	}
	runs, err := store.ResultsUpdatedSince(ctx, c.seen.Add(-updateOverlap))
	if err != nil {
		return err
	}
	for _, r := range runs {
		p, ok := c.pairs[r.PairKey]
		if !ok || r.ID == p.last.ID || newerRun(r, p.last) {
			p.last = r
		}
		if r.LastSuccess.After(p.lastSuccess) {
			p.lastSuccess = r.LastSuccess
		}
		c.pairs[r.PairKey] = p
		if r.Updated.After(c.seen) {
			c.seen = r.Updated
		}
	}
	if c.seen.After(now) {
		c.seen = now // a writer's clock ahead of ours must not hide the others' runs
	}
	return nil
}

// newerRun says whether a comes after b among a pair's runs: by planned
// start, then by ID, as LastResults orders them.
func newerRun(a, b archive.GridRun) bool {
	if !a.Planned.Equal(b.Planned) {
		return a.Planned.After(b.Planned)
	}
	return a.ID > b.ID
}

// each refreshes the copy from store and calls f with every pair's last run whose
// pair keep says to show, the copy locked meanwhile.
func (c *lastResults) each(ctx context.Context, store *archive.Store, now time.Time, keep func(archive.PairKey) bool, f func(archive.PairStatus)) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.refresh(ctx, store, now); err != nil {
		return err
	}
	for k, p := range c.pairs {
		if keep(k) {
			s := p.last.PairStatus
			s.LastSuccess = p.lastSuccess
			f(s)
		}
	}
	return nil
}
