package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// MinPruneAge is the youngest age archive prune takes: anything younger
// would remove the runs of the day, which is a mistake, not a policy.
const MinPruneAge = 24 * time.Hour

// ParseAge reads an age for prune: whole days ("400d"), or a duration
// as --since takes it ("36h", "90m").
func ParseAge(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseUint(n, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("invalid age %q: want whole days (400d) or a duration (36h)", s)
		}
		return time.Duration(days) * MinPruneAge, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid age %q: want whole days (400d) or a duration (36h)", s)
	}
	return d, nil
}

// PruneRequest says what archive prune removes: the runs that started
// (or, never started, were recorded) more than OlderThan before Now,
// except those of a kept campaign, with everything stored beside them.
// The schedule's past in the same database is taskstore's to remove
// (taskstore.Store.Prune), inside the same transaction (PruneBeside).
type PruneRequest struct {
	OlderThan time.Duration
	Now       time.Time
	DryRun    bool // count, remove nothing
}

// PruneResult is what a prune removed, or would remove.
type PruneResult struct {
	Before     time.Time // the cut: older than this goes
	Runs       int64     // runs removed
	KeptRuns   int64     // old runs kept for their campaign
	Partitions []string  // PostgreSQL partitions of run dropped whole
}

// PruneBeside prunes what another store keeps in the archive's database
// (taskstore's schedule) older than before, in the prune's transaction
// tx, so that both go or neither does; dryRun: count, remove nothing.
type PruneBeside func(ctx context.Context, tx *sql.Tx, before time.Time, dryRun bool) error

// ErrPruneTooYoung refuses an age under MinPruneAge.
var ErrPruneTooYoung = errors.New("prune age under one day")

// runChildTables hold rows of a run by run_id: deleted with it.
var runChildTables = []string{"run_axis", "run_summary", "run_figure", "run_interval", "host_state", "host_limits", "run_path"}

// oldRunCond picks the runs a prune removes; its arguments are the cut
// (once).
const oldRunCond = `COALESCE(started, recorded) < ? AND (campaign IS NULL OR campaign NOT IN (SELECT name FROM campaign WHERE keep <> 0))`

// Prune removes what req says, and what each of beside removes, in one
// transaction. On PostgreSQL a month's partition of run all of whose runs
// go is dropped whole rather than emptied row by row.
func (s *Store) Prune(ctx context.Context, req PruneRequest, beside ...PruneBeside) (PruneResult, error) {
	if req.OlderThan < MinPruneAge {
		return PruneResult{}, fmt.Errorf("%w: %s", ErrPruneTooYoung, req.OlderThan)
	}
	before := req.Now.Add(-req.OlderThan).UTC()
	res := PruneResult{Before: before}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	count := func(q string, args ...any) (int64, error) {
		var n int64
		err := tx.QueryRowContext(ctx, s.q(q), args...).Scan(&n)
		return n, err
	}
	if res.Runs, err = count(`SELECT COUNT(*) FROM run WHERE `+oldRunCond, before); err != nil {
		return res, err
	}
	if res.KeptRuns, err = count(`SELECT COUNT(*) FROM run WHERE COALESCE(started, recorded) < ?
		AND campaign IN (SELECT name FROM campaign WHERE keep <> 0)`, before); err != nil {
		return res, err
	}
	parts, err := s.runPartitions(ctx, tx)
	if err != nil {
		return res, err
	}
	for _, p := range parts {
		if p.to.After(before) {
			continue
		}
		// Whole only if every run in it goes: none is young, none kept.
		// The name comes from the catalogue and matched run_YYYY_MM.
		var stays bool
		if err := tx.QueryRowContext(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM `+p.name+` WHERE NOT (`+oldRunCond+`))`), before).Scan(&stays); err != nil {
			return res, err
		}
		if !stays {
			res.Partitions = append(res.Partitions, p.name)
		}
	}
	pruneBeside := func() error {
		for _, b := range beside {
			if err := b(ctx, tx, before, req.DryRun); err != nil {
				return err
			}
		}
		return nil
	}
	if req.DryRun {
		return res, pruneBeside()
	}
	for _, t := range runChildTables {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM `+t+` WHERE run_id IN (SELECT id FROM run WHERE `+oldRunCond+`)`), before); err != nil {
			return res, fmt.Errorf("pruning %s: %w", t, err)
		}
	}
	for _, name := range res.Partitions {
		if _, err := tx.ExecContext(ctx, `DROP TABLE `+name); err != nil {
			return res, fmt.Errorf("dropping %s: %w", name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM run WHERE `+oldRunCond), before); err != nil {
		return res, fmt.Errorf("pruning runs: %w", err)
	}
	// Last, so that its failure takes back every run removed above.
	if err := pruneBeside(); err != nil {
		return res, err
	}
	if err := tx.Commit(); err != nil {
		return res, err
	}
	for _, name := range res.Partitions {
		s.runMonths.Delete(name)
	}
	return res, nil
}

// KeepCampaign marks a campaign kept (prune leaves its runs, whatever
// their age) or, keep false, no longer kept.
func (s *Store) KeepCampaign(ctx context.Context, name string, keep bool) error {
	r, err := s.db.ExecContext(ctx, s.q(`UPDATE campaign SET keep = ? WHERE name = ?`), boolInt(keep), name)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("campaign %q: %w", name, ErrNotFound)
	}
	return nil
}

// KeptCampaigns lists the campaigns marked kept, by name.
func (s *Store) KeptCampaigns(ctx context.Context) ([]string, error) {
	return s.names(ctx, `SELECT name FROM campaign WHERE keep <> 0 ORDER BY name`)
}
