package daemon

import (
	"context"
	"sync"
	"time"
)

// Runs planned longer ago than settledAge have ended: a run is started
// within its slip or missed, and no test outlasts the server's 24-hour
// --max-duration, so their states no longer change but by `archive
// prune`. settledRefresh is how often their count is read again anyway,
// so that a prune shows within the hour.
const (
	settledAge     = 48 * time.Hour
	settledRefresh = time.Hour
)

// stateCounter counts one source's runs by state among those planned in
// [from, to), either end open when zero (taskstore.Store).
type stateCounter interface {
	StateCountsFromPlanned(ctx context.Context, source string, from, to time.Time) (map[string]int, error)
}

// runCounts is /metrics' count of this host's runs by state without
// reading its whole history on every scrape: the settled runs' counts
// are read once an hour, and each scrape reads only the runs planned
// since then (a host probing every minute has 2 million runs in a year;
// counting them took 1.7 s a scrape).
type runCounts struct {
	mu      sync.Mutex
	settled map[string]int // runs planned before cutoff
	cutoff  time.Time
	readAt  time.Time // when settled was read; zero: never
	reads   int       // settled reads, for tests
}

// counts returns source's runs by state at now.
func (c *runCounts) counts(ctx context.Context, db stateCounter, source string, now time.Time) (map[string]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readAt.IsZero() || now.Sub(c.readAt) >= settledRefresh || now.Before(c.readAt) {
		cutoff := now.Add(-settledAge)
		settled, err := db.StateCountsFromPlanned(ctx, source, time.Time{}, cutoff)
		if err != nil {
			return nil, err
		}
		c.settled, c.cutoff, c.readAt = settled, cutoff, now
		c.reads++
	}
	recent, err := db.StateCountsFromPlanned(ctx, source, c.cutoff, time.Time{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(recent)+len(c.settled))
	for st, n := range c.settled {
		out[st] += n
	}
	for st, n := range recent {
		out[st] += n
	}
	return out, nil
}
