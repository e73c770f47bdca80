// Package taskstore keeps the schedule's state: the tasks, the runs
// planned from them (from planning to their end, with the reason for each
// state), the reservations and leases that keep runs apart, and the
// queries of that state the grid and /metrics read. It is not the results
// archive (package archive: runs, campaigns, paths, imports), though it
// lives in the archive's database and shares its connection pool: a
// scheduled run's ID is also its ID in the archive's run table, where its
// document lands, and the grid's queries join the two.
//
// Its tables are created by the archive's migrations (in the one order
// that every archive written before the two stores parted has recorded in
// its schema_version), so opening the archive is what brings them up to
// date; New only adopts the open database.
package taskstore

import (
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// Store is the schedule's state in an archive's database.
type Store struct {
	db archive.DB
}

// New is the schedule's state in archive a's database. It opens no
// connection of its own: its queries take the archive's
// pool's, within the archive's cap (archive.Store.SetMaxConns), and it is
// closed with the archive.
func New(a *archive.Store) *Store { return &Store{db: a.DB()} }

func (s *Store) q(query string) string { return s.db.Rebind(query) }
func (s *Store) forUpdate() string     { return s.db.ForUpdate() }

type scanner interface{ Scan(...any) error }

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
