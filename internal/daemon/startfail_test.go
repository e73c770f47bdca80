package daemon_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
)

// failReservations makes the next n reservations the database is asked
// for fail with an error of its own (not a busy host), as a lost
// connection or a transaction PostgreSQL aborted would. A sequence
// counts them: the trigger's other writes are rolled back with it.
func failReservations(t *testing.T, dsn string, n int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`CREATE SEQUENCE injected_failures`,
		`CREATE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('injected_failures') <= ` + strconv.Itoa(n) + ` THEN
				RAISE EXCEPTION 'injected failure';
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER injected_failure BEFORE INSERT ON reservation FOR EACH ROW EXECUTE FUNCTION injected_failure()`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// A run whose start the archive fails (not a busy host) tries again
// until its deadline: it runs once a start succeeds, and when none does
// it is recorded missed with the archive's error. Returning the error
// left the run scheduled, and the planner recorded it later as never
// taken by its daemon (a CI mesh lab's h1 run, whose start PostgreSQL
// had failed as a deadlock's victim).
func TestRunStartFailuresAreRetriedThenSaid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		failures int
		want     string
	}{
		{"two failures", 2, archive.StateFinished},
		{"every start fails", 1 << 30, archive.StateMissed},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dsn, ok := archivetest.Backends(t)["postgres"]
			if !ok {
				t.Skip(archivetest.EnvPG + " not set: the failures are injected by a PostgreSQL trigger")
			}
			ctx := context.Background()
			ran := 0
			d := newDaemon(t, "a", dsn, false, func(cfg *daemon.Config) {
				cfg.Binary = "/nonexistent/wireperf"
				cfg.RunTest = func(context.Context, *schedule.Task) ([]byte, error) {
					ran++
					return []byte(`{"start":{"test_start":{"protocol":"TCP","num_streams":1,"duration":1}},
						"end":{"sum_sent":{"seconds":1,"bytes":1000,"bits_per_second":8000},"sum_received":{"seconds":1,"bytes":1000,"bits_per_second":8000}}}`), nil
				}
			})
			defer d.CloseQueue()
			defer d.Store().Close()
			failReservations(t, dsn, c.failures)
			tk := loopTask("tput", "a", "b", 5201, 1, 0, 2*time.Second, 1)
			_, r := runFirst(t, ctx, d, tk)
			if r.State != c.want {
				t.Fatalf("run %s (%q), want %s", r.State, r.Reason, c.want)
			}
			switch c.want {
			case archive.StateFinished:
				if ran != 1 {
					t.Errorf("the test ran %d times, want once", ran)
				}
			case archive.StateMissed:
				if ran != 0 || !strings.Contains(r.Reason, "injected failure") || !strings.Contains(r.Reason, "not started by its deadline") {
					t.Errorf("the test ran %d times and the run says %q: want none, and the archive's error as the reason", ran, r.Reason)
				}
			}
		})
	}
}
