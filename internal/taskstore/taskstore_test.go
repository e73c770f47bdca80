package taskstore

import (
	"context"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
)

// The two stores share the archive's pool: capped at one connection (a
// daemon's share on PostgreSQL), the schedule's queries and the archive's
// take turns on it, and no second connection opens.
func TestStoresShareTheArchivesConnections(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			s.SetMaxConns(1)
			if _, err := s.ApplyTasks(ctx, "m.yaml", nil, s0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.List(ctx, archive.Filter{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.LastResults(ctx); err != nil { // joins the two stores' tables
				t.Fatal(err)
			}
			st := s.results.DB().Stats()
			if st.MaxOpenConnections != 1 || st.OpenConnections > 1 {
				t.Fatalf("pool: %d open, cap %d", st.OpenConnections, st.MaxOpenConnections)
			}
			if s.db.DB != s.results.DB().DB {
				t.Fatal("the schedule's store has a pool of its own")
			}
		})
	}
}
