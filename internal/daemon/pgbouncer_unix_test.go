//go:build unix

package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
	"github.com/wireperf/wireperf/internal/testutil/pgbouncer"
)

// startPgBouncer runs pgbouncer in transaction mode on a loopback port in
// front of the test PostgreSQL, with one server connection per database
// (so every client's transactions take turns on it), and returns the
// daemon's DSN through it.
func startPgBouncer(t *testing.T, dsn string) string {
	b, err := pgbouncer.Start(dsn, pgbouncer.Options{PoolSize: 1, MaxClients: 50})
	if errors.Is(err, pgbouncer.ErrNotInstalled) || errors.Is(err, pgbouncer.ErrRoot) {
		t.Skip(err.Error() + ": the transaction-pooler test needs it")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Stop)
	return b.DSN
}

// Two daemons work through PgBouncer in transaction mode, with one server
// connection that every client's transactions take turns on: the
// archive's and River's migrations, planning, reservations, River's
// polling and the results are stored, with no prepared statement or
// session lock left on a server connection for another client to trip on.
func TestDaemonsBehindPgBouncer(t *testing.T) {
	t.Parallel()
	dsn, ok := archivetest.Backends(t)["postgres"]
	if !ok {
		t.Skip(archivetest.EnvPG + " not set: PgBouncer needs a PostgreSQL behind it")
	}
	bouncer := startPgBouncer(t, dsn)
	a := newDaemon(t, "a", bouncer, false, nil)
	b := newDaemon(t, "b", bouncer, true, nil)
	ctx := context.Background()
	const runs = 2
	probe := loopTask("probe", "b", "a", b.ServerPort(), 1, 4*time.Second, 3*time.Second, runs)
	probe.DestAddr = fmt.Sprintf("127.0.0.1:%d", b.ServerPort()) // b's own server: a has none
	probe.Class = schedule.Background
	for _, tk := range []*schedule.Task{loopTask("tput", "a", "b", b.ServerPort(), 1, 4*time.Second, 3*time.Second, runs), probe} {
		if _, err := a.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stopA, stopB := start(t, a), start(t, b)
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all := waitDone(t, st, 2*runs, 90*time.Second)
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	if err := stopB(); err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.State != archive.StateFinished {
			t.Errorf("run %s %s→%s %s: %s", r.ID, r.Source, r.Dest, r.State, r.Reason)
		}
	}
	res, err := taskstore.New(st).LastResults(ctx)
	if err != nil || len(res) != 2 {
		t.Fatalf("last results through the pooler: %d %v", len(res), err)
	}
}
