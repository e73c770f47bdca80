package daemon

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// runningJob is a run started by its River job, as a worker leaves it
// once its test has ended: the run running with its reservations, the
// job running. It returns the run, the job's ID and the outcome the
// worker records.
func runningJob(t *testing.T, d *Daemon) (*schedule.Task, string, int64, outcome) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	tk := &schedule.Task{ID: schedule.DefineID("test", "probe", "a", "b"), Name: "probe", Source: "a", Dest: "b",
		Args: []string{"rr", "-t", "1"}, Class: schedule.Background, Duration: time.Minute,
		Start: now.Truncate(time.Second), Repeat: time.Minute, Slip: 30 * time.Second, MaxRuns: 1, Origin: "test"}
	if _, err := d.sched.PutTask(ctx, tk, now); err != nil {
		t.Fatal(err)
	}
	r, _ := tk.At(0)
	if _, err := d.sched.PlanRuns(ctx, []*taskstore.SchedRun{taskstore.NewSchedRun(tk, r)}, now); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.sched.Start(ctx, tk.Reservations(r.ID, now), r.ID, now); err != nil || !ok {
		t.Fatalf("start: %v %v", ok, err)
	}
	if err := d.queue.Enqueue(ctx, "a", r.ID); err != nil {
		t.Fatal(err)
	}
	db := d.store.DB()
	var id int64
	if err := db.QueryRowContext(ctx, db.Rebind(`SELECT id FROM river_job WHERE args->>'run_id' = ?`), r.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	// What River's fetch does to the job it hands a worker.
	if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`), id); err != nil {
		t.Fatal(err)
	}
	return tk, r.ID, id, outcome{RunID: r.ID, Dest: "b", Test: "probe", Cmdline: "wireperf rr -t 1", Began: now, Ended: now.Add(time.Second),
		State: archive.StateFinished, JobID: id}
}

func jobState(t *testing.T, d *Daemon, id int64) string {
	t.Helper()
	db := d.store.DB()
	var state string
	if err := db.QueryRowContext(context.Background(), db.Rebind(`SELECT state FROM river_job WHERE id = ?`), id).Scan(&state); err != nil {
		t.Fatal(err)
	}
	return state
}

func newQueueDaemon(t *testing.T, dsn string) *Daemon {
	t.Helper()
	d, err := New(context.Background(), Config{Host: "a", DSN: dsn, Logger: slog.New(slog.DiscardHandler), SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.queue.Close()
		d.store.Close()
	})
	return d
}

// A run's job is completed in the transaction that records the run's
// end: a daemon killed as soon as that commits (River never completes
// the job itself) leaves the run finished and its job completed, so no
// rescue works it again; and the run, worked again all the same, is
// neither run nor recorded a second time. River's own completion, when
// it comes, is answered without a statement.
func TestRunsJobCompletesWithItsResult(t *testing.T) {
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := newQueueDaemon(t, dsn)
			_, runID, jobID, o := runningJob(t, d)
			if err := d.recordOutcome(ctx, o); err != nil {
				t.Fatal(err)
			}
			// The daemon dies here, before River's completer runs.
			if s := jobState(t, d, jobID); s != string(rivertype.JobStateCompleted) {
				t.Fatalf("the run's job is %q after its result was recorded, want completed", s)
			}
			run, err := d.sched.GetSchedRun(ctx, runID)
			if err != nil || run.State != archive.StateFinished {
				t.Fatalf("the run: %+v %v", run, err)
			}
			rec, err := d.store.Get(ctx, runID)
			if err != nil || rec.State != archive.StateFinished || rec.Attempts != 1 {
				t.Fatalf("the recorded run: %+v %v", rec, err)
			}

			// Another daemon works the job again (as after a rescue): the
			// run is finished already, so nothing runs or is recorded.
			again := newQueueDaemon(t, dsn)
			again.cfg.RunTest = func(context.Context, *schedule.Task) ([]byte, error) {
				t.Error("a finished run was run again")
				return nil, errors.New("run again")
			}
			if err := again.execute(ctx, runID, jobID); err != nil {
				t.Fatal(err)
			}
			rec, err = d.store.Get(ctx, runID)
			if err != nil || rec.State != archive.StateFinished || rec.Attempts != 1 {
				t.Fatalf("the recorded run after it was worked again: %+v %v", rec, err)
			}

			// River's completer, had the daemon lived: answered from the
			// transaction's row, with nothing sent.
			counting := &countingExecutor{}
			e := quietExecutor{Executor: counting, polls: d.queue.(interface{ quiet() *quietPolls }).quiet()}
			set := riverdriver.JobSetStateCompleted(jobID, time.Now(), nil)
			rows, err := e.JobSetStateIfRunningMany(ctx, manyParams(set))
			if err != nil || len(rows) != 1 || rows[0].ID != jobID || rows[0].State != rivertype.JobStateCompleted {
				t.Fatalf("River's completion: %+v %v", rows, err)
			}
			if counting.calls != 0 {
				t.Errorf("River's completion of a job completed with its run sent %d statements", counting.calls)
			}
		})
	}
}

// faultyQueue completes the job in the transaction and then fails, as
// a daemon killed before the report's commit would leave it.
type faultyQueue struct{ queue }

func (q faultyQueue) CompleteTx(ctx context.Context, tx *sql.Tx, jobID int64, at time.Time) (func(), error) {
	if _, err := q.queue.CompleteTx(ctx, tx, jobID, at); err != nil {
		return nil, err
	}
	return nil, errors.New("cut short")
}

// A transaction that does not commit completes no job: the completion
// goes with the run's end or not at all. The result is then recorded
// alone, and the job left for River to complete as it always did.
func TestRunsJobNotCompletedWithoutItsResult(t *testing.T) {
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := newQueueDaemon(t, dsn)
			_, runID, jobID, o := runningJob(t, d)
			d.queue = faultyQueue{d.queue}
			if err := d.recordOutcome(ctx, o); err != nil {
				t.Fatal(err)
			}
			if s := jobState(t, d, jobID); s != string(rivertype.JobStateRunning) {
				t.Fatalf("the job is %q after its transaction was rolled back, want running", s)
			}
			run, err := d.sched.GetSchedRun(ctx, runID)
			if err != nil || run.State != archive.StateFinished {
				t.Fatalf("the run recorded alone: %+v %v", run, err)
			}
		})
	}
}

// River's completions are split: the jobs completed with their runs are
// answered from their rows, and only the others are sent, every field
// kept with its job.
func TestQuietExecutorSendsOnlyTheOtherCompletions(t *testing.T) {
	p := &quietPolls{every: time.Minute, now: time.Now}
	p.completedInTx(&rivertype.JobRow{ID: 2, State: rivertype.JobStateCompleted})
	counting := &countingExecutor{}
	e := quietExecutor{Executor: counting, polls: p}
	in := &riverdriver.JobSetStateIfRunningManyParams{Schema: "s"}
	for _, id := range []int64{1, 2, 3} {
		set := riverdriver.JobSetStateDiscarded(id, time.Now(), []byte{byte(id)}, nil)
		if id == 2 {
			set = riverdriver.JobSetStateCompleted(id, time.Now(), nil)
		}
		appendParams(in, set)
	}
	rows, err := e.JobSetStateIfRunningMany(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if counting.calls != 1 || !slices.Equal(counting.last.ID, []int64{1, 3}) || counting.last.Schema != "s" ||
		counting.last.ErrData[0][0] != 1 || counting.last.ErrData[1][0] != 3 || counting.last.State[1] != rivertype.JobStateDiscarded {
		t.Fatalf("sent %d times, last %+v; want jobs 1 and 3 with their own fields", counting.calls, counting.last)
	}
	ids := []int64{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Errorf("rows for %v, want 1, 2 and 3", ids)
	}
	// The job's entry went with River's completion: a later batch naming
	// it (none does) is sent.
	again := &riverdriver.JobSetStateIfRunningManyParams{}
	appendParams(again, riverdriver.JobSetStateCompleted(2, time.Now(), nil))
	if _, err := e.JobSetStateIfRunningMany(context.Background(), again); err != nil || counting.calls != 2 {
		t.Errorf("a job's second completion: %d sends, %v", counting.calls, err)
	}
	// A failed send keeps the entries for River's next try.
	p.completedInTx(&rivertype.JobRow{ID: 5})
	counting.fail = errors.New("down")
	both := &riverdriver.JobSetStateIfRunningManyParams{}
	appendParams(both, riverdriver.JobSetStateCompleted(5, time.Now(), nil))
	appendParams(both, riverdriver.JobSetStateCompleted(6, time.Now(), nil))
	if _, err := e.JobSetStateIfRunningMany(context.Background(), both); err == nil {
		t.Fatal("a failed send succeeded")
	}
	counting.fail = nil
	if rows, err := e.JobSetStateIfRunningMany(context.Background(), both); err != nil || len(rows) != 2 || !slices.Equal(counting.last.ID, []int64{6}) {
		t.Errorf("River's next try: %d rows, sent %v, %v; want job 5's kept", len(rows), counting.last.ID, err)
	}
}

func manyParams(set *riverdriver.JobSetStateIfRunningParams) *riverdriver.JobSetStateIfRunningManyParams {
	p := &riverdriver.JobSetStateIfRunningManyParams{}
	appendParams(p, set)
	return p
}

func appendParams(p *riverdriver.JobSetStateIfRunningManyParams, set *riverdriver.JobSetStateIfRunningParams) {
	p.ID = append(p.ID, set.ID)
	p.Attempt = append(p.Attempt, set.Attempt)
	p.ErrData = append(p.ErrData, set.ErrData)
	p.FinalizedAt = append(p.FinalizedAt, set.FinalizedAt)
	p.MetadataDoMerge = append(p.MetadataDoMerge, set.MetadataDoMerge)
	p.MetadataUpdates = append(p.MetadataUpdates, set.MetadataUpdates)
	p.ScheduledAt = append(p.ScheduledAt, set.ScheduledAt)
	p.State = append(p.State, set.State)
}

// countingExecutor answers River's completions as the database would
// (a row for each job), and counts what it was sent.
type countingExecutor struct {
	riverdriver.Executor
	calls int
	last  *riverdriver.JobSetStateIfRunningManyParams
	fail  error
}

func (c *countingExecutor) JobSetStateIfRunningMany(_ context.Context, p *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	c.calls++
	c.last = p
	if c.fail != nil {
		return nil, c.fail
	}
	rows := make([]*rivertype.JobRow, len(p.ID))
	for i, id := range p.ID {
		rows[i] = &rivertype.JobRow{ID: id, State: p.State[i]}
	}
	return rows, nil
}

// tickClock is a daemon's clock whose ticks the test sends.
type tickClock struct {
	now   time.Time
	ticks chan time.Time
}

func (c *tickClock) Now() time.Time                                    { return c.now }
func (c *tickClock) SleepUntil(ctx context.Context, _ time.Time) error { return ctx.Err() }
func (c *tickClock) Every(time.Duration) (<-chan time.Time, func())    { return c.ticks, func() {} }

// A test that ends while its lease is being renewed waits for the
// renewal rather than cancel it: pgx closes a connection whose statement
// is cancelled, and each new connection costs the database transactions
// of its own (its start, a ping, its statements described again). The
// renewal here is held by a lock on the reservations while the test
// ends; it goes through once the lock is released, and the connection
// that ran it is still open after.
func TestTestsEndLeavesTheLeaseRenewalToFinish(t *testing.T) {
	dsn, ok := archivetest.Backends(t)["postgres"]
	if !ok {
		t.Skip("WIREPERF_TEST_PG_DSN not set: what this guards is PostgreSQL's connection")
	}
	ctx := context.Background()
	d := newQueueDaemon(t, dsn)
	tk, runID, _, _ := runningJob(t, d)
	db := d.store.DB()
	lock, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	// The lock's transaction has the pool's one connection: the
	// daemon's renewal needs one of its own, and the test one to watch
	// (pg_stat_activity, which a transaction sees as it first read it).
	db.SetMaxOpenConns(3)
	db.SetMaxIdleConns(3)
	if _, err := lock.ExecContext(ctx, `LOCK TABLE reservation IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	from := time.Now()
	clk := &tickClock{now: from.Add(schedule.LeaseRenew), ticks: make(chan time.Time, 1)}
	d.cfg.Clock = clk
	hbctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.heartbeat(hbctx, runID, from, schedule.LeaseEnd(from, from, tk.Hold()), tk.Hold(), d.log, func() { t.Error("the lease counted lost") })
	}()
	clk.ticks <- clk.now
	var renewer int
	for deadline := time.Now().Add(30 * time.Second); renewer == 0; {
		err := db.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE reservation SET hi%'`).Scan(&renewer)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the renewal never waited for the lock")
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: pg_stat_activity, until the renewal waits or the deadline above
	}
	stop() // the test ended
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	<-done
	// The renewal went through once the lock was released.
	var hi time.Time
	if err := db.QueryRowContext(ctx, `SELECT max(hi) FROM reservation WHERE run_id = $1`, runID).Scan(&hi); err != nil {
		t.Fatal(err)
	}
	if want := schedule.LeaseEnd(from, clk.now, tk.Hold()); !hi.Equal(want.Truncate(time.Microsecond)) {
		t.Errorf("the lease reaches %v after the test ended during its renewal, want the renewal's %v", hi, want)
	}
	var alive int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, renewer).Scan(&alive); err != nil {
		t.Fatal(err)
	}
	if alive != 1 {
		t.Errorf("the connection that renewed the lease was closed when the test ended (backend %d gone)", renewer)
	}
}
