package taskstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// PruneResult is what archive prune removed, or would remove: the
// archive's runs, and the schedule's past.
type PruneResult struct {
	archive.PruneResult
	SchedRuns    int64 // the schedule's runs planned before the cut and no longer waiting or running
	Reservations int64 // reservations that ended before the cut
}

// Prune is archive prune over a's database, which holds the schedule's
// state too: a's old runs (archive.Store.Prune) and, in the same
// transaction, the schedule's past runs planned before the cut (none
// still waiting or running) and the reservations that ended before it.
func Prune(ctx context.Context, a *archive.Store, req archive.PruneRequest) (PruneResult, error) {
	s := New(a)
	var res PruneResult
	ar, err := a.Prune(ctx, req, func(ctx context.Context, tx *sql.Tx, before time.Time, dryRun bool) error {
		var err error
		res.SchedRuns, res.Reservations, err = s.prunePast(ctx, tx, before, dryRun)
		return err
	})
	res.PruneResult = ar
	return res, err
}

// prunePast counts and, unless dryRun, removes in tx the schedule's past
// before the cut.
func (s *Store) prunePast(ctx context.Context, tx *sql.Tx, before time.Time, dryRun bool) (runs, reservations int64, err error) {
	const pastRuns = `FROM sched_run WHERE planned < ? AND state NOT IN (?, ?)`
	const pastReservations = `FROM reservation WHERE hi < ?`
	runArgs := []any{before, archive.StateScheduled, archive.StateRunning}
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) `+pastRuns), runArgs...).Scan(&runs); err != nil {
		return 0, 0, err
	}
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) `+pastReservations), before).Scan(&reservations); err != nil {
		return 0, 0, err
	}
	if dryRun {
		return runs, reservations, nil
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE `+pastRuns), runArgs...); err != nil {
		return 0, 0, fmt.Errorf("pruning the schedule's runs: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE `+pastReservations), before); err != nil {
		return 0, 0, fmt.Errorf("pruning reservations: %w", err)
	}
	return runs, reservations, nil
}
