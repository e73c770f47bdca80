package daemon

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/riverqueue/river"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/meshmetrics"
	"github.com/wireperf/wireperf/internal/ping"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/tcpconnect"
	"github.com/wireperf/wireperf/internal/testline"
	"github.com/wireperf/wireperf/internal/trace"
	"github.com/wireperf/wireperf/internal/version"
)

// runWorker works RunArgs jobs: it waits for the run's instant, takes its
// reservation, runs the test and records what happened.
type runWorker struct {
	river.WorkerDefaults[RunArgs]
	d *Daemon
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	w.d.running.Add(1)
	defer w.d.running.Done()
	return w.d.execute(ctx, job.Args.RunID, job.ID)
}

// reservePoll is how often a run waiting for its hosts looks again.
const reservePoll = 250 * time.Millisecond

// record is a context for the archive's writes that outlives the run's:
// a stopped run is still recorded. Its timeout bounds I/O, in machine
// time.
func record(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

// execute runs one planned run, the River job jobID's (0: none). Its
// errors are the archive's; what happened to the test is in the run's
// state and reason.
func (d *Daemon) execute(ctx context.Context, runID string, jobID int64) error {
	st := d.sched
	// The run and its task as the last plan read them; the archive is
	// asked only for a run queued before a restart. Either may have
	// changed since: the start (taskstore.Start) starts only a run still
	// scheduled.
	r := d.due.known(runID)
	d.due.taken(runID)
	if r == nil {
		var err error
		r, err = st.GetSchedRun(ctx, runID)
		if errors.Is(err, archive.ErrNotFound) {
			return nil // its task was removed or paused
		}
		if err != nil {
			return err
		}
	}
	if r.State != archive.StateScheduled {
		return nil // taken already
	}
	log := d.log.With("run", r.ID, "test", r.Test, "dest", r.Dest)
	task := d.plannedTask(r.TaskID)
	if task == nil {
		var err error
		task, err = st.GetTask(ctx, r.TaskID)
		if errors.Is(err, archive.ErrNotFound) {
			_, err = d.settle(ctx, r.ID, "", []string{archive.StateScheduled}, archive.StateMissed, "its task was removed", time.Time{})
			return err
		}
		if err != nil {
			return err
		}
	}
	// The run's own destination: a rotating task's runs go to each of
	// its destinations in turn, and reserve, dial and record that one.
	rotating := task.Rotating()
	task = task.ForRun(r.Seq)
	if rotating && task.Dest != r.Dest {
		// Planned from another definition of the task (an update drops
		// the runs not started, so this is a race with one).
		_, err := d.settle(ctx, r.ID, taskKind(task), []string{archive.StateScheduled}, archive.StateMissed,
			fmt.Sprintf("its task changed: run %d now goes to %s, not %s", r.Seq, task.Dest, r.Dest), time.Time{})
		return err
	}
	plan := schedule.Run{ID: r.ID, TaskID: r.TaskID, Seq: r.Seq, Planned: r.Planned, Deadline: r.Deadline}
	clk := d.cfg.Clock
	start := r.Planned
	var waited *schedule.Busy // the first holder this run waited for
	var startFailed bool      // a start failed other than busy (said once)
	var reserved time.Time    // when its lease was taken
	for {
		if err := clk.SleepUntil(ctx, start); err != nil {
			_, err := d.settle(ctx, r.ID, taskKind(task), []string{archive.StateScheduled}, archive.StateMissed, "the daemon stopped before the run's start", time.Time{})
			return err
		}
		now := clk.Now()
		if late, why := schedule.Late(plan, now); late {
			log.Warn("run missed", "reason", why)
			_, err := d.settle(ctx, r.ID, taskKind(task), []string{archive.StateScheduled}, archive.StateMissed, why, time.Time{})
			return err
		}
		reserved = now
		started, err := st.Start(ctx, task.Reservations(r.ID, now), r.ID, now)
		var busy *schedule.Busy
		if errors.As(err, &busy) {
			if waited == nil {
				waited = busy
			}
			at, ok, why := schedule.NextTry(plan, busy, now, reservePoll)
			if !ok {
				log.Warn("run missed", "reason", why)
				_, err := d.settle(ctx, r.ID, taskKind(task), []string{archive.StateScheduled}, archive.StateMissed, why, time.Time{})
				return err
			}
			start = at
			continue
		}
		if err != nil {
			// A start that failed (a connection lost, a transaction the
			// database aborted) reserved nothing: the run tries again until
			// its deadline, and then says why it never started. Returned,
			// the error left the run scheduled, and the planner later
			// recorded it as never taken by its daemon. A daemon stopping
			// records the run as stopped (the sleep above).
			if ctx.Err() != nil {
				continue
			}
			if !startFailed {
				log.Warn("the run's start failed; trying again until its deadline", "err", err)
				startFailed = true
			}
			if at := now.Add(reservePoll); !at.After(r.Deadline) {
				start = at
				continue
			}
			why := "not started by its deadline: the archive refused its start: " + archive.ErrorLine(err)
			log.Warn("run missed", "reason", why)
			_, err := d.settle(ctx, r.ID, taskKind(task), []string{archive.StateScheduled}, archive.StateMissed, why, time.Time{})
			return err
		}
		if !started {
			return nil // no longer scheduled (its task changed), nothing reserved
		}
		break
	}
	began := reserved
	d.metrics.RunStarted()
	d.metrics.ObserveLag(r.Planned, began)
	log.Info("run started", "lag", began.Sub(r.Planned))
	// The lease was taken from reserved, before the archive's start,
	// which waits for the daemon's one connection and for the archive
	// itself. A clean-clone CI run's record under load fits a start that
	// took 14.5 s of a 15 s lease: the heartbeat's first renewal would
	// come after the lease lapsed, and another run took a host while the
	// test ran. A lease that could lapse before that first renewal is
	// renewed now, or the test is not begun.
	held, leaseErr := d.leaseAtStart(ctx, r.ID, reserved, task.Hold(), log)
	hbctx, stopHeartbeat := context.WithCancel(context.WithoutCancel(ctx))
	testCtx, stopTest := context.WithCancelCause(ctx)
	defer stopTest(nil)
	var doc []byte
	var cmdline string
	var runErr error
	var ended time.Time
	if leaseErr == nil {
		hbDone := make(chan struct{})
		go func() {
			defer close(hbDone)
			d.heartbeat(hbctx, r.ID, reserved, held, task.Hold(), log, func() { stopTest(errLeaseLost) })
		}()
		doc, cmdline, runErr = d.runTest(testCtx, task)
		// The test's end, not the heartbeat's: a renewal under way when
		// the test ends runs to its own end (up to LeaseRenew), and the
		// run's record, which the schedule's overlap checks read, is of
		// the test.
		ended = clk.Now()
		stopHeartbeat()
		<-hbDone
	} else {
		stopHeartbeat()
		ended = clk.Now()
	}
	if len(doc) > 0 && runErr == nil {
		runErr = reportError(doc, testKind(task))
	}
	state, reason := archive.StateFinished, ""
	if waited != nil {
		// A finished run that started late says why.
		reason = fmt.Sprintf("started %v late: waited for %s (run %s)", began.Sub(r.Planned).Round(time.Millisecond), waited.Resource, waited.RunID)
	}
	switch {
	case leaseErr != nil:
		state, reason = archive.StateAborted, leaseErr.Error()
	case ctx.Err() != nil:
		state, reason = archive.StateAborted, "the daemon stopped: the test ran past the grace period"
	case errors.Is(context.Cause(testCtx), errLeaseLost):
		state, reason = archive.StateAborted, errLeaseLost.Error()
	case runErr != nil:
		state, reason = archive.StateFailed, archive.ErrorLine(runErr)
	}
	if state == archive.StateFinished {
		// What limited the test outside the path (a lab's router that fell
		// behind, which the test checks when the daemon runs through
		// `wireperf lab exec`) goes with the run's reason, where the grid
		// and the API show the run, as well as in its document.
		for _, w := range documentWarnings(doc) {
			log.Warn("run limited outside the path", "warning", w)
			reason = strings.TrimPrefix(reason+"; "+w, "; ")
		}
	}
	d.metrics.RunEnded(taskKind(task), state, true)
	o := outcome{RunID: r.ID, Dest: r.Dest, Test: r.Test, Exclusive: task.Class == schedule.Exclusive, Cmdline: cmdline, Document: doc, Began: began, Ended: ended, State: state, Reason: reason,
		JobID: jobID}
	rctx, cancel := record(ctx)
	defer cancel()
	if err := d.recordOutcome(rctx, o); err != nil {
		// The archive is unreachable: the result waits in the spool, and
		// the flush loop records it once the archive is back.
		if serr := d.spool.save(o); serr != nil {
			log.Error("run neither recorded nor spooled: its result is lost", "err", err, "spool_err", serr)
			return err
		}
		log.Warn("the archive is unreachable: the run's result is spooled until it is back", "err", err, "spool", d.spool.dir)
		return nil
	}
	if state == archive.StateFinished {
		log.Info("run finished", "seconds", ended.Sub(began).Seconds())
	} else {
		log.Warn("run "+state, "reason", reason)
	}
	return nil
}

// errLeaseLost is why a test is stopped when its lease could not be
// renewed in time.
var errLeaseLost = errors.New("stopped: the archive did not renew the run's lease on its hosts in time, and another run could have taken them once it lapsed")

// errLeaseLapsedAtStart is why a run is not begun when its lease could
// lapse before the heartbeat's first renewal and could not be renewed.
var errLeaseLapsedAtStart = errors.New("not begun: the archive took so long to start the run that its lease on its hosts could lapse before the test, and renewing it failed")

// leaseAtStart is the end of the run's lease as the test begins: the
// first lease (taken at from), or, when that could lapse before the
// heartbeat's first renewal (schedule.LeaseLost at this instant), a
// lease renewed now. An error says the test must not begin.
func (d *Daemon) leaseAtStart(ctx context.Context, runID string, from time.Time, hold time.Duration, log *slog.Logger) (time.Time, error) {
	held, limit := schedule.LeaseEnd(from, from, hold), from.Add(hold)
	now := d.cfg.Clock.Now()
	if !schedule.LeaseLost(held, now, limit) {
		return held, nil
	}
	log.Warn("the run's first lease could lapse before its first renewal: renewing it before the test", "lease_end", held, "started_after", now.Sub(from))
	held, ok := d.renew(ctx, runID, from, now, hold, held, log)
	if !ok || schedule.LeaseLost(held, d.cfg.Clock.Now(), limit) {
		return held, errLeaseLapsedAtStart
	}
	return held, nil
}

// renew renews the run's lease at now and returns where it ends, with
// ok false when the archive did not renew it (held is then unchanged).
func (d *Daemon) renew(ctx context.Context, runID string, from, now time.Time, hold time.Duration, held time.Time, log *slog.Logger) (time.Time, bool) {
	until := schedule.LeaseEnd(from, now, hold)
	// The renewal's own timeout bounds I/O, in machine time. The test's
	// end doesn't cut a renewal short: pgx closes a connection whose
	// statement is cancelled, and a test of the renewal's period ends as
	// it renews, so that each such run cost a new connection, its ping
	// and its statements' descriptions again (docs/scale.md). Its end
	// waits for the renewal instead.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), schedule.LeaseRenew)
	ok, err := d.sched.RenewLease(rctx, runID, now, until)
	cancel()
	switch {
	case err == nil && ok:
		return until, true
	case err != nil && ctx.Err() == nil:
		log.Warn("the run's lease was not renewed", "err", err)
	}
	// A renewal that changed nothing (the lease already reaches until)
	// leaves held as it was: only time ends a lease.
	return held, err == nil && !held.Before(until)
}

// heartbeat renews a running test's lease, which holds until held,
// every LeaseRenew until ctx ends: while this daemon lives its hosts
// stay reserved, and when it dies they are free within LeaseTTL. When
// the renewals fail long enough that the lease could lapse before the
// test ends (schedule.LeaseLost, judged when the renewal has returned,
// for it may take up to its timeout), it calls lost: an exclusive test
// must not go on past its lease, where another run may take its hosts.
func (d *Daemon) heartbeat(ctx context.Context, runID string, from, held time.Time, hold time.Duration, log *slog.Logger, lost func()) {
	ticks, stop := d.cfg.Clock.Every(schedule.LeaseRenew)
	defer stop()
	limit := from.Add(hold)
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		held, _ = d.renew(ctx, runID, from, d.cfg.Clock.Now(), hold, held, log)
		if now := d.cfg.Clock.Now(); ctx.Err() == nil && schedule.LeaseLost(held, now, limit) {
			log.Warn("stopping the test: its lease on its hosts could lapse before it ends", "lease_end", held)
			lost()
			return
		}
	}
}

// recordOutcome stores what became of a run: its hosts are released, its
// report stored as the run of the same ID, and its state moved on. Each
// step may be done again: a spooled outcome whose recording was cut
// short is recorded once. An error is the archive's being unreachable;
// a report it refuses while reachable is logged, and the run's state is
// still recorded.
func (d *Daemon) recordOutcome(ctx context.Context, o outcome) error {
	rec := &archive.Run{ID: o.RunID, Source: archive.SourceNative, ToolVersion: version.String(), Cmdline: o.Cmdline,
		LocalHost: d.cfg.Host, RemoteHost: o.Dest, Started: o.Began, Ended: o.Ended, Axes: map[string]archive.Axis{}, State: o.State}
	if len(o.Document) > 0 {
		rec.Document, rec.DocumentFormat = o.Document, archive.FormatJSON
		if p, err := archive.ParseDocument(o.Document); err == nil {
			rec.Summary, rec.Intervals, rec.Hosts, rec.Limits, rec.Axes = p.Summary, p.Intervals, p.Hosts, p.Limits, p.Axes
			rec.LocalKernel, rec.RemoteKernel = p.LocalKernel, p.RemoteKernel
		}
	}
	if o.State != archive.StateFinished {
		rec.Error = o.Reason
	}
	// An exclusive run's hosts are free once the test has ended: a run
	// waiting for them need not wait while this one's report is stored
	// as well (under load that took over a second). A background run's
	// reservations keep nobody waiting, and end with the report, in its
	// transaction.
	if o.Exclusive {
		if err := d.sched.Release(ctx, o.RunID, o.Ended); err != nil {
			return d.archiveError(ctx, err)
		}
	}
	// The run's job is completed in the same transaction: a daemon that
	// dies after it commits leaves no job running to be rescued, and
	// one that dies before leaves the run running and its job to River's
	// rescuer, as before.
	jobDone := func() {}
	finish := func(ctx context.Context, tx *sql.Tx) error {
		if err := d.sched.Finish(ctx, tx, o.RunID, o.State, o.Reason, o.Ended, d.cfg.Clock.Now()); err != nil {
			return err
		}
		if o.JobID == 0 || d.queue == nil {
			return nil
		}
		done, err := d.queue.CompleteTx(ctx, tx, o.JobID, d.cfg.Clock.Now())
		if err != nil {
			return &jobCompletionError{err}
		}
		jobDone = done
		return nil
	}
	err := d.store.PutRunWith(ctx, rec, finish)
	if jc := (*jobCompletionError)(nil); errors.As(err, &jc) {
		// River completes the job on its own once the worker returns:
		// the run's end is recorded without it.
		d.log.Warn("the run's job not completed with its result: recording the result alone", "run", o.RunID, "err", jc.err)
		jobDone = func() {}
		err = d.store.PutRunWith(ctx, rec, func(ctx context.Context, tx *sql.Tx) error {
			return d.sched.Finish(ctx, tx, o.RunID, o.State, o.Reason, o.Ended, d.cfg.Clock.Now())
		})
	}
	if err == nil {
		jobDone()
	}
	switch {
	case err == nil || errors.Is(err, archive.ErrFinished):
		if p := d.tracePath(o); p != nil && err == nil {
			if err := d.store.PutPath(ctx, p); err != nil {
				if err := d.archiveError(ctx, err); err != nil {
					return err
				}
				d.log.Error("run's path not stored", "run", o.RunID, "err", err)
			} else if p.Changed {
				d.metrics.PathChanged(meshmetrics.PathPair{Src: p.Source, Dst: p.Dest, Test: p.Test})
				d.log.Info("path changed", "run", o.RunID, "dest", o.Dest, "test", o.Test, "from", trace.PathKey(p.Prev), "to", trace.PathKey(p.Hops))
			}
		}
	default:
		if err := d.archiveError(ctx, err); err != nil {
			return err
		}
		// The archive answered but refused the report: the run's end is
		// still recorded, without it.
		d.log.Error("run's report not stored", "run", o.RunID, "err", err)
		if err := d.sched.Release(ctx, o.RunID, o.Ended); err != nil {
			return d.archiveError(ctx, err)
		}
		if _, err := d.sched.Transition(ctx, o.RunID, []string{archive.StateRunning}, o.State, o.Reason, time.Time{}, o.Ended, d.cfg.Clock.Now()); err != nil {
			return d.archiveError(ctx, err)
		}
	}
	d.archiveUp.Store(true)
	return nil
}

// jobCompletionError is a River job's completion that failed in its
// run's transaction.
type jobCompletionError struct{ err error }

func (e *jobCompletionError) Error() string { return e.err.Error() }

// archiveError tells an unreachable archive (the error, returned) from
// one that answered with an error (nil): it asks the archive.
func (d *Daemon) archiveError(ctx context.Context, err error) error {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingTimeout)
	defer cancel()
	if perr := d.store.Ping(pctx); perr != nil {
		d.lastDown.Store(d.cfg.Clock.Now().UnixNano())
		if d.archiveUp.Swap(false) {
			d.log.Error("the archive is unreachable", "err", perr)
		}
		return err
	}
	d.archiveUp.Store(true)
	return nil
}

// pingTimeout bounds asking whether the archive answers.
const pingTimeout = 3 * time.Second

// flushSpool records the spooled outcomes, oldest first, until the
// archive fails again; it returns how many were recorded.
func (d *Daemon) flushSpool(ctx context.Context) int {
	entries, errs := d.spool.entries()
	for _, err := range errs {
		d.log.Error("spool entry not readable: left in place", "err", err)
	}
	n := 0
	for _, o := range entries {
		rctx, cancel := record(ctx)
		err := d.recordOutcome(rctx, o)
		cancel()
		if err != nil {
			return n
		}
		if err := d.spool.remove(o.RunID); err != nil {
			d.log.Error("spool entry recorded but not removed", "run", o.RunID, "err", err)
			return n
		}
		d.log.Info("spooled run recorded", "run", o.RunID, "state", o.State)
		n++
	}
	return n
}

// testKind is the kind of the task's test.
func testKind(t *schedule.Task) measure.Kind {
	if len(t.Args) == 0 {
		return ""
	}
	return measure.Kind(t.Args[0])
}

// probesOthers says a test of kind measures a host whatever it runs, and
// so talks to no server: it has no keys or trust to be given.
func probesOthers(kind measure.Kind) bool {
	return kind == measure.KindTrace || kind == measure.KindPing || kind == measure.KindTCPConnect
}

// reportError is the error a test's report states, or why the report
// can't be read: a trace's, ping's and tcp-connect's documents are their
// own, every other test's iperf3's layout.
func reportError(doc []byte, kind measure.Kind) error {
	switch kind {
	case measure.KindPing:
		var d ping.Document
		return probeError(json.Unmarshal(doc, &d), d.Ping != nil, d.Error)
	case measure.KindTCPConnect:
		var d tcpconnect.Document
		return probeError(json.Unmarshal(doc, &d), d.TCPConnect != nil, d.Error)
	}
	if kind == measure.KindTrace {
		d, err := trace.ParseDocument(doc)
		switch {
		case err != nil:
			return fmt.Errorf("its report: %w", err)
		case d.Error != "":
			return errors.New(d.Error)
		case d.Trace == nil:
			return errors.New("its report: no trace")
		}
		return nil
	}
	p, err := archive.ParseDocument(doc)
	if err != nil {
		return fmt.Errorf("its report: %w", err)
	}
	if p.Error != "" {
		return errors.New(p.Error)
	}
	return nil
}

// documentWarnings are the warnings of a test's -J document: a bulk
// test's (wireperf.result.warnings), a request-response test's or a
// sweep's (result.warnings, sweep.warnings).
func documentWarnings(doc []byte) []string {
	var d struct {
		Wireperf struct {
			Result struct {
				Warnings []string `json:"warnings"`
			} `json:"result"`
		} `json:"wireperf"`
		Result struct {
			Warnings []string `json:"warnings"`
		} `json:"result"`
		Sweep struct {
			Warnings []string `json:"warnings"`
		} `json:"sweep"`
	}
	if json.Unmarshal(doc, &d) != nil {
		return nil
	}
	return slices.Concat(d.Wireperf.Result.Warnings, d.Result.Warnings, d.Sweep.Warnings)
}

// probeError is the error of a probe's document: unreadable, an error
// stated, or no result.
func probeError(parse error, hasResult bool, stated string) error {
	switch {
	case parse != nil:
		return fmt.Errorf("its report: %w", parse)
	case stated != "":
		return errors.New(stated)
	case !hasResult:
		return errors.New("its report: no result")
	}
	return nil
}

// tracePath is the path a finished trace run found, nil for any other
// run.
func (d *Daemon) tracePath(o outcome) *archive.Path {
	if o.State != archive.StateFinished || len(o.Document) == 0 {
		return nil
	}
	doc, err := trace.ParseDocument(o.Document)
	if err != nil || doc.Trace == nil {
		return nil
	}
	return &archive.Path{RunID: o.RunID, Source: d.cfg.Host, Dest: o.Dest, Test: o.Test, At: o.Began,
		Hops: doc.Trace.Path(), Reached: doc.Trace.Reached}
}

// settle moves a run of a test of kind that never started to its final
// state, and counts it.
func (d *Daemon) settle(ctx context.Context, id, kind string, from []string, to, reason string, ended time.Time) (bool, error) {
	rctx, cancel := record(ctx)
	defer cancel()
	ok, err := d.sched.Transition(rctx, id, from, to, reason, time.Time{}, ended, d.cfg.Clock.Now())
	if ok {
		d.metrics.RunEnded(kind, to, false)
	}
	return ok, err
}

// TestArgs is what runs a task's test: the test line read again here,
// since the archive is shared and its rows are data to this host, then
// its command, its flags bound to their values, the destination's port,
// -J for one document, and the destination after "--". A --bind must
// name one of local, this host's addresses.
func TestArgs(t *schedule.Task, local []netip.Addr) ([]string, error) {
	l, err := testline.Parse(t.Args)
	if err != nil {
		return nil, fmt.Errorf("test: %w", err)
	}
	if err := l.CheckBind(local); err != nil {
		return nil, fmt.Errorf("test: %w", err)
	}
	dest, err := taskDest(t)
	if err != nil {
		return nil, err
	}
	return l.Args(dest), nil
}

// taskDest is where t's test connects: its destination address, or its
// destination when it has none.
func taskDest(t *schedule.Task) (testline.Dest, error) {
	addr := t.DestAddr
	if addr == "" {
		addr = t.Dest
	}
	dest, err := testline.ParseDest(addr)
	if err != nil {
		return testline.Dest{}, fmt.Errorf("dest_addr: %w", err)
	}
	return dest, nil
}

// localAddrs are this host's addresses, for a test line's --bind.
func localAddrs() []netip.Addr {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range ifAddrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}

// maxDocument bounds a test's report read back (a long test with many
// streams and intervals stays well under it).
const maxDocument = 64 << 20

// runTest runs the task's test as a child process of this binary (or
// through Config.RunTest): a crash of the test is not the daemon's, and
// SIGTERM reaches the child when the run is stopped. It returns the -J
// document.
func (d *Daemon) runTest(ctx context.Context, t *schedule.Task) (doc []byte, cmdline string, err error) {
	args, err := TestArgs(t, localAddrs())
	if err != nil {
		return nil, "", err
	}
	// The configuration's flags go after the command, and are not shown
	// in the stored command line (they name this host's files).
	shown := "wireperf " + strings.Join(args, " ")
	var env []string
	if !probesOthers(testKind(t)) {
		// A trace, ping or tcp-connect talks to no server: it has no keys
		// or trust to be given.
		var given []string
		given, env = d.clientArgs(t)
		args = append(append([]string{args[0]}, given...), args[1:]...)
	}
	cmdline = shown
	// The test bounds itself; this bounds a test that hangs, to the time
	// its reservations cover (machine time: the child runs in it).
	tctx, cancel := context.WithTimeout(ctx, t.Hold())
	defer cancel()
	if d.cfg.RunTest != nil {
		doc, err = d.cfg.RunTest(tctx, t)
		return doc, cmdline, err
	}
	cmd := exec.CommandContext(tctx, d.cfg.Binary, args...)
	cmd.Env = append(append(os.Environ(), d.cfg.Env...), env...)
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 10 * time.Second
	childDiesWithUs(cmd)
	runtime.LockOSThread() // see childDiesWithUs
	defer runtime.UnlockOSThread()
	var out limitedBuffer
	var stderr limitedBuffer
	out.max, stderr.max = maxDocument, 64<<10
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, lastLine(msg))
		}
	}
	return out.Bytes(), cmdline, err
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// limitedBuffer keeps at most max bytes.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room < len(p) {
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
