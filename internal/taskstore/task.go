package taskstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
)

// The schedule's tables: tasks (sched_task), their planned runs
// (sched_run, one row per run from planning to its end, with its state
// and the reason for it) and reservations. A scheduled run's ID is also
// its ID in the run table, where its -J document lands.

const taskColumns = `id, name, source, dest, dest_addr, args, direction, class, duration_ms, start_at, repeat_ms,
	slip_ms, random_slip_ms, until_at, max_runs, paused, resources, thresholds, origin, mesh_group, dests`

// taskReadColumns are taskColumns and when the task was added, from
// which its max_runs counts (schedule.Task.Added).
const taskReadColumns = taskColumns + `, created`

// storedDests are a rotating task's destinations in the task's dests
// column: a JSON object of three lists of the same length (lists rather
// than an object per destination: a 1,000-host sampled group stores a
// million destinations per schedule); empty for a task of one
// destination.
type storedDests struct {
	Hosts []string `json:"hosts"`
	Addrs []string `json:"addrs"`
	AtMS  []int64  `json:"at_ms"`
}

func destsText(ds []schedule.Destination) string {
	if len(ds) == 0 {
		return ""
	}
	out := storedDests{Hosts: make([]string, len(ds)), Addrs: make([]string, len(ds)), AtMS: make([]int64, len(ds))}
	for i, d := range ds {
		out.Hosts[i], out.Addrs[i], out.AtMS[i] = d.Host, d.Addr, ms(d.At)
	}
	return jsonText(out)
}

func parseDests(s string) ([]schedule.Destination, error) {
	var in storedDests
	if err := unmarshalText(s, &in); err != nil || len(in.Hosts) == 0 {
		return nil, err
	}
	if len(in.Addrs) != len(in.Hosts) || len(in.AtMS) != len(in.Hosts) {
		return nil, fmt.Errorf("%d hosts, %d addresses and %d instants", len(in.Hosts), len(in.Addrs), len(in.AtMS))
	}
	out := make([]schedule.Destination, len(in.Hosts))
	for i, h := range in.Hosts {
		out[i] = schedule.Destination{Host: h, Addr: in.Addrs[i], At: dur(in.AtMS[i])}
	}
	return out, nil
}

func ms(d time.Duration) int64  { return d.Milliseconds() }
func dur(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
func jsonText(v any) string     { b, _ := json.Marshal(v); return string(b) }
func isEmptyJSON(s string) bool { return s == "" || s == "null" || s == "{}" || s == "[]" }
func unmarshalText(s string, v any) error {
	if isEmptyJSON(s) {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

func taskArgs(t *schedule.Task) []any {
	res := ""
	if len(t.Resources) > 0 {
		res = jsonText(t.Resources)
	}
	return []any{t.ID, t.Name, t.Source, t.Dest, t.DestAddr, jsonText(t.Args), string(t.Direction()), string(t.Class),
		ms(t.Duration), t.Start.UTC(), ms(t.Repeat), ms(t.Slip), ms(t.RandomSlip), nullTime(t.Until), t.MaxRuns,
		boolInt(t.Paused), res, jsonText(t.Thresholds), t.Origin, t.Group, destsText(t.Dests)}
}

func scanTask(sc scanner) (*schedule.Task, error) {
	var t schedule.Task
	var args, direction, class, res, thr, dests string
	var durMS, repMS, slipMS, rslipMS int64
	var until sql.NullTime
	var paused int
	if err := sc.Scan(&t.ID, &t.Name, &t.Source, &t.Dest, &t.DestAddr, &args, &direction, &class, &durMS, &t.Start,
		&repMS, &slipMS, &rslipMS, &until, &t.MaxRuns, &paused, &res, &thr, &t.Origin, &t.Group, &dests, &t.Added); err != nil {
		return nil, err
	}
	t.Added = t.Added.UTC()
	t.Class = schedule.Class(class)
	t.SetDirection(schedule.Direction(direction)) // written from Direction when stored
	t.Duration, t.Repeat, t.Slip, t.RandomSlip = dur(durMS), dur(repMS), dur(slipMS), dur(rslipMS)
	t.Start = t.Start.UTC()
	if until.Valid {
		t.Until = until.Time.UTC()
	}
	t.Paused = paused != 0
	if err := unmarshalText(args, &t.Args); err != nil {
		return nil, &BadTaskError{t.ID, "args", err}
	}
	if err := unmarshalText(res, &t.Resources); err != nil {
		return nil, &BadTaskError{t.ID, "resources", err}
	}
	if err := unmarshalText(thr, &t.Thresholds); err != nil {
		return nil, &BadTaskError{t.ID, "thresholds", err}
	}
	var err error
	if t.Dests, err = parseDests(dests); err != nil {
		return nil, &BadTaskError{t.ID, "dests", err}
	}
	return &t, nil
}

// sameTask compares two tasks as stored (instants to the millisecond).
func sameTask(a, b *schedule.Task) bool {
	x, y := *a, *b
	for _, t := range []*schedule.Task{&x, &y} {
		t.ClearDirection()    // a function of Args, recorded or not
		t.Added = time.Time{} // the record's, not the definition's
		t.Start = t.Start.UTC().Truncate(time.Millisecond)
		t.Until = t.Until.UTC().Truncate(time.Millisecond)
		if len(t.Resources) == 0 {
			t.Resources = nil
		}
		if len(t.Dests) == 0 {
			t.Dests = nil
		} else {
			// Stored to the millisecond, as the task's other durations.
			ds := make([]schedule.Destination, len(t.Dests))
			for i, d := range t.Dests {
				d.At = dur(ms(d.At))
				ds[i] = d
			}
			t.Dests = ds
		}
	}
	return reflect.DeepEqual(x, y)
}

// TaskChange says what storing a task did.
type TaskChange int

const (
	TaskUnchanged TaskChange = iota
	TaskAdded
	TaskUpdated
)

// String is what the change did to the task, as a command reports it:
// "added", "updated" or "unchanged".
func (c TaskChange) String() string {
	switch c {
	case TaskAdded:
		return "added"
	case TaskUpdated:
		return "updated"
	}
	return "unchanged"
}

// PutTask stores a task, or updates the stored one with the same ID; a
// task stored exactly as given is left alone (TaskUnchanged). now is the
// caller's clock, recorded as the task's creation or update.
func (s *Store) PutTask(ctx context.Context, t *schedule.Task, now time.Time) (TaskChange, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	c, err := s.putTask(ctx, tx, t, now)
	if err != nil {
		return 0, err
	}
	return c, tx.Commit()
}

func (s *Store) putTask(ctx context.Context, tx *sql.Tx, t *schedule.Task, now time.Time) (TaskChange, error) {
	if err := t.Validate(); err != nil {
		return 0, fmt.Errorf("task %s: %w", t.ID, err)
	}
	old, err := scanTask(tx.QueryRowContext(ctx, s.q(`SELECT `+taskReadColumns+` FROM sched_task WHERE id = ?`+s.forUpdate()), t.ID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO sched_task (`+taskColumns+`, created, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), append(taskArgs(t), now.UTC(), now.UTC())...)
		if err != nil {
			return 0, fmt.Errorf("storing task %s: %w", t.ID, err)
		}
		return TaskAdded, nil
	case err != nil:
		return 0, err
	case sameTask(old, t):
		return TaskUnchanged, nil
	}
	a := taskArgs(t)
	_, err = tx.ExecContext(ctx, s.q(`UPDATE sched_task SET name = ?, source = ?, dest = ?, dest_addr = ?, args = ?, direction = ?,
		class = ?, duration_ms = ?, start_at = ?, repeat_ms = ?, slip_ms = ?, random_slip_ms = ?, until_at = ?, max_runs = ?,
		paused = ?, resources = ?, thresholds = ?, origin = ?, mesh_group = ?, dests = ?, updated = ? WHERE id = ?`), append(a[1:], now.UTC(), t.ID)...)
	if err != nil {
		return 0, fmt.Errorf("updating task %s: %w", t.ID, err)
	}
	// Runs planned from the old definition and not started are dropped;
	// the planner plans the new one's.
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM sched_run WHERE task_id = ? AND state = ?`), t.ID, archive.StateScheduled); err != nil {
		return 0, err
	}
	return TaskUpdated, nil
}

// ApplyResult counts what ApplyTasks did.
type ApplyResult struct{ Added, Updated, Unchanged, Removed int }

// ApplyTasks makes the tasks of one origin (a mesh file) exactly those
// given, in one transaction: new ones are added, changed ones updated,
// and the origin's tasks that are no longer given removed. Applying the
// same tasks twice changes nothing the second time. now is the caller's
// clock, recorded as the tasks' creation or update.
func (s *Store) ApplyTasks(ctx context.Context, origin string, tasks []*schedule.Task, now time.Time) (ApplyResult, error) {
	var res ApplyResult
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	keep := map[string]bool{}
	for _, t := range tasks {
		if t.Origin != origin {
			return res, fmt.Errorf("task %s: origin %q, applying %q", t.ID, t.Origin, origin)
		}
		c, err := s.putTask(ctx, tx, t, now)
		if err != nil {
			return res, err
		}
		keep[t.ID] = true
		switch c {
		case TaskAdded:
			res.Added++
		case TaskUpdated:
			res.Updated++
		default:
			res.Unchanged++
		}
	}
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id FROM sched_task WHERE origin = ?`), origin)
	if err != nil {
		return res, err
	}
	var gone []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return res, err
		}
		if !keep[id] {
			gone = append(gone, id)
		}
	}
	rows.Close()
	for _, id := range gone {
		if err := s.deleteTask(ctx, tx, id); err != nil {
			return res, err
		}
		res.Removed++
	}
	return res, tx.Commit()
}

func (s *Store) deleteTask(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM sched_run WHERE task_id = ? AND state = ?`), id, archive.StateScheduled); err != nil {
		return err
	}
	r, err := tx.ExecContext(ctx, s.q(`DELETE FROM sched_task WHERE id = ?`), id)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("task %s: %w", id, archive.ErrNotFound)
	}
	return nil
}

// DeleteTask removes a task and its runs not yet started; runs that
// have run stay in the archive.
func (s *Store) DeleteTask(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.deleteTask(ctx, tx, id); err != nil {
		return err
	}
	return tx.Commit()
}

// SetPaused pauses or resumes a task. Pausing drops its runs not yet
// started; resuming plans from the next run to come. now is the
// caller's clock, recorded as the task's update.
func (s *Store) SetPaused(ctx context.Context, id string, paused bool, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r, err := tx.ExecContext(ctx, s.q(`UPDATE sched_task SET paused = ?, updated = ? WHERE id = ?`), boolInt(paused), now.UTC(), id)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("task %s: %w", id, archive.ErrNotFound)
	}
	if paused {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM sched_run WHERE task_id = ? AND state = ?`), id, archive.StateScheduled); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// GetTask returns a stored task.
func (s *Store) GetTask(ctx context.Context, id string) (*schedule.Task, error) {
	t, err := scanTask(s.db.QueryRowContext(ctx, s.q(`SELECT `+taskReadColumns+` FROM sched_task WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("task %s: %w", id, archive.ErrNotFound)
	}
	return t, err
}

// Tasks lists the tasks; source "" lists every host's. A row that
// doesn't decode is an error: ReadTasks skips it.
func (s *Store) Tasks(ctx context.Context, source string) ([]*schedule.Task, error) {
	tasks, bad, err := s.ReadTasks(ctx, source)
	if err == nil && len(bad) > 0 {
		err = bad[0]
	}
	return tasks, err
}

// ReadTasks lists the tasks as Tasks does, passing over the rows that
// don't decode (a dests, args, resources or thresholds column that is
// not what this version writes: the archive is shared, its rows are data)
// with an error each in bad, so that one such row doesn't stop the
// planning of its host's other tasks.
func (s *Store) ReadTasks(ctx context.Context, source string) (tasks []*schedule.Task, bad []error, err error) {
	tasks, _, bad, err = s.readTasks(ctx, source, false)
	return tasks, bad, err
}

// PlanTasks is a source host's tasks as ReadTasks lists them, with the
// highest sequence number planned for each task that has runs: what a
// plan reads, in one query where it took one and one more a task. Each
// maximum comes from the index on (task_id, seq), not from the host's
// whole history of runs.
func (s *Store) PlanTasks(ctx context.Context, source string) (tasks []*schedule.Task, lastSeq map[string]int, bad []error, err error) {
	return s.readTasks(ctx, source, true)
}

func (s *Store) readTasks(ctx context.Context, source string, withSeq bool) (tasks []*schedule.Task, lastSeq map[string]int, bad []error, err error) {
	cols := taskReadColumns
	if withSeq {
		cols += `, (SELECT MAX(r.seq) FROM sched_run r WHERE r.task_id = sched_task.id)`
		lastSeq = map[string]int{}
	}
	q, args := `SELECT `+cols+` FROM sched_task`, []any{}
	if source != "" {
		q, args = q+` WHERE source = ?`, append(args, source)
	}
	rows, err := s.db.QueryContext(ctx, s.q(q+` ORDER BY source, dest, name, id`), args...)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq sql.NullInt64
		var sc scanner = rows
		if withSeq {
			sc = scanWith{rows, &seq}
		}
		t, err := scanTask(sc)
		var be *BadTaskError
		switch {
		case errors.As(err, &be):
			bad = append(bad, err)
			continue
		case err != nil:
			return nil, nil, nil, err
		}
		tasks = append(tasks, t)
		if seq.Valid {
			lastSeq[t.ID] = int(seq.Int64)
		}
	}
	return tasks, lastSeq, bad, rows.Err()
}

// scanWith scans a row's columns and, last, one more.
type scanWith struct {
	rows  *sql.Rows
	extra any
}

func (w scanWith) Scan(dest ...any) error { return w.rows.Scan(append(dest, w.extra)...) }

// BadTaskError is a stored task whose row doesn't decode.
type BadTaskError struct {
	ID, Column string
	Err        error
}

func (e *BadTaskError) Error() string {
	return fmt.Sprintf("task %s: %s: %v", e.ID, e.Column, e.Err)
}

func (e *BadTaskError) Unwrap() error { return e.Err }

// TasksVersion tells whether the tasks changed: their count and their
// latest creation or update (as the database writes it: compared, never
// read). A cache of Tasks compares it before reading them all again (a
// 1,000-host sampled mesh's tasks are 66 MB of rows).
type TasksVersion struct {
	Count   int
	Updated string
}

// TasksVersion reads the tasks' version.
func (s *Store) TasksVersion(ctx context.Context) (TasksVersion, error) {
	var v TasksVersion
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(CAST(MAX(updated) AS TEXT), '') FROM sched_task`).Scan(&v.Count, &v.Updated)
	return v, err
}

// SchedRun is one planned run and what became of it.
type SchedRun struct {
	ID, TaskID        string
	Seq               int
	Source, Dest      string
	Test, Direction   string
	Class             schedule.Class
	Planned, Deadline time.Time
	ActualStart       time.Time // zero until it starts
	Ended             time.Time // zero until it ends
	State             string
	Reason            string
}

// Lag is how late the run started: actual start − planned start.
func (r *SchedRun) Lag() (time.Duration, bool) {
	if r.ActualStart.IsZero() {
		return 0, false
	}
	return r.ActualStart.Sub(r.Planned), true
}

// NewSchedRun is a planned run of t, in state scheduled, to the run's
// own destination.
func NewSchedRun(t *schedule.Task, r schedule.Run) *SchedRun {
	return &SchedRun{ID: r.ID, TaskID: t.ID, Seq: r.Seq, Source: t.Source, Dest: t.RunDest(r.Seq).Host, Test: t.Name,
		Direction: string(t.Direction()), Class: t.Class, Planned: r.Planned, Deadline: r.Deadline, State: archive.StateScheduled}
}

const schedRunColumns = `id, task_id, seq, source, dest, test, direction, class, planned, deadline, actual_start, ended, state, reason`

func scanSchedRun(sc scanner) (*SchedRun, error) {
	var r SchedRun
	var class string
	var start, ended sql.NullTime
	if err := sc.Scan(&r.ID, &r.TaskID, &r.Seq, &r.Source, &r.Dest, &r.Test, &r.Direction, &class, &r.Planned, &r.Deadline,
		&start, &ended, &r.State, &r.Reason); err != nil {
		return nil, err
	}
	r.Class = schedule.Class(class)
	r.Planned, r.Deadline = r.Planned.UTC(), r.Deadline.UTC()
	if start.Valid {
		r.ActualStart = start.Time.UTC()
	}
	if ended.Valid {
		r.Ended = ended.Time.UTC()
	}
	return &r, nil
}

// PlanRuns stores planned runs; a run already stored (planned before, or
// recorded since) is left as it is. It returns the runs it added. now is
// the caller's clock, recorded as the runs' update.
func (s *Store) PlanRuns(ctx context.Context, runs []*SchedRun, now time.Time) ([]*SchedRun, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	now = now.UTC()
	var added []*SchedRun
	for _, r := range runs {
		res, err := tx.ExecContext(ctx, s.q(`INSERT INTO sched_run (`+schedRunColumns+`, updated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
			r.ID, r.TaskID, r.Seq, r.Source, r.Dest, r.Test, r.Direction, string(r.Class), r.Planned.UTC(), r.Deadline.UTC(),
			nullTime(r.ActualStart), nullTime(r.Ended), r.State, r.Reason, now)
		if err != nil {
			return nil, fmt.Errorf("planning run %s: %w", r.ID, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			added = append(added, r)
		}
	}
	return added, tx.Commit()
}

// LastSeq is the highest sequence number planned for a task, -1 if none.
func (s *Store) LastSeq(ctx context.Context, taskID string) (int, error) {
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT MAX(seq) FROM sched_run WHERE task_id = ?`), taskID).Scan(&n); err != nil {
		return 0, err
	}
	if !n.Valid {
		return -1, nil
	}
	return int(n.Int64), nil
}

// GetSchedRun returns a planned run.
func (s *Store) GetSchedRun(ctx context.Context, id string) (*SchedRun, error) {
	r, err := scanSchedRun(s.db.QueryRowContext(ctx, s.q(`SELECT `+schedRunColumns+` FROM sched_run WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("scheduled run %s: %w", id, archive.ErrNotFound)
	}
	return r, err
}

// Transition moves a run to state `to` if it is in one of the states
// `from`, setting its reason and, when not zero, its actual start and
// end. ok false: the run was not in one of those states (another
// daemon, or an earlier attempt, took it). now is the caller's clock,
// recorded as the run's update.
func (s *Store) Transition(ctx context.Context, id string, from []string, to, reason string, start, ended, now time.Time) (ok bool, err error) {
	return s.transition(ctx, s.db, id, from, to, reason, start, ended, now)
}

// execer is the database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *Store) transition(ctx context.Context, ex execer, id string, from []string, to, reason string, start, ended, now time.Time) (ok bool, err error) {
	if len(from) == 0 {
		return false, errors.New("transition: no from state")
	}
	q := `UPDATE sched_run SET state = ?, reason = ?, updated = ?`
	args := []any{to, reason, now.UTC()}
	if !start.IsZero() {
		q, args = q+`, actual_start = ?`, append(args, start.UTC())
	}
	if !ended.IsZero() {
		q, args = q+`, ended = ?`, append(args, ended.UTC())
	}
	q += ` WHERE id = ? AND state IN (?` + strings.Repeat(", ?", len(from)-1) + `)`
	args = append(args, id)
	for _, f := range from {
		args = append(args, f)
	}
	res, err := ex.ExecContext(ctx, s.q(q), args...)
	if err != nil {
		return false, fmt.Errorf("run %s to %s: %w", id, to, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// AbortRunning records as aborted the runs of a source host still marked
// running: its daemon stopped while they ran. It returns their IDs.
func (s *Store) AbortRunning(ctx context.Context, source, reason string, now time.Time) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id FROM sched_run WHERE source = ? AND state = ?`), source, archive.StateRunning)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	var done []string
	for _, id := range ids {
		// The test died with its daemon, by the end of its last lease at
		// the latest: that is its end, not the daemon's return (another
		// run may have taken its hosts when the lease lapsed).
		ended := now
		var hi sql.NullTime
		if err := s.db.QueryRowContext(ctx, s.q(`SELECT hi FROM reservation WHERE run_id = ? ORDER BY hi DESC LIMIT 1`), id).Scan(&hi); err == nil && hi.Valid && hi.Time.Before(now) {
			ended = hi.Time.UTC()
		}
		ok, err := s.Transition(ctx, id, []string{archive.StateRunning}, archive.StateAborted, reason, time.Time{}, ended, now)
		if err != nil {
			return done, err
		}
		if ok {
			done = append(done, id)
		}
	}
	return done, nil
}

// RunQuery picks planned runs. Zero fields pick everything.
type RunQuery struct {
	Source, Dest string
	Host         string    // source or destination
	Since, Until time.Time // planned in [Since, Until)
	States       []string
	Limit        int
}

// SchedRuns returns the runs q picks, by planned start.
func (s *Store) SchedRuns(ctx context.Context, q RunQuery) ([]*SchedRun, error) {
	query, args := schedRunsQuery(q)
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*SchedRun
	for rows.Next() {
		r, err := scanSchedRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// schedRunsQuery is the query SchedRuns runs for q, with its arguments.
func schedRunsQuery(q RunQuery) (string, []any) {
	var conds []string
	var args []any
	add := func(c string, a ...any) { conds, args = append(conds, c), append(args, a...) }
	if q.Source != "" {
		add("source = ?", q.Source)
	}
	if q.Dest != "" {
		add("dest = ?", q.Dest)
	}
	if q.Host != "" {
		add("(source = ? OR dest = ?)", q.Host, q.Host)
	}
	if !q.Since.IsZero() {
		add("planned >= ?", q.Since.UTC())
	}
	if !q.Until.IsZero() {
		add("planned < ?", q.Until.UTC())
	}
	if len(q.States) > 0 {
		c := "state IN (?" + strings.Repeat(", ?", len(q.States)-1) + ")"
		var a []any
		for _, st := range q.States {
			a = append(a, st)
		}
		add(c, a...)
	}
	query := `SELECT ` + schedRunColumns + ` FROM sched_run`
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	query += ` ORDER BY planned, id`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	return query, args
}

// Reserve takes every reservation of one run, or none: an exclusive one
// that overlaps another run's exclusive one on the same resource fails
// with a *schedule.Busy naming the holder. PostgreSQL's exclusion
// constraint refuses the overlap even between two daemons reserving at
// the same instant; SQLite's write lock, taken when the transaction
// begins, makes the check and the insert one step.
func (s *Store) Reserve(ctx context.Context, rs []schedule.Reservation) error {
	if len(rs) > 0 && !slices.ContainsFunc(rs, func(r schedule.Reservation) bool { return r.Class == schedule.Exclusive }) {
		return s.reserveShared(ctx, s.db, rs)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.reserveExclusive(ctx, tx, rs); err != nil {
		return err
	}
	return tx.Commit()
}

// Start takes a run's reservations, as Reserve does, and moves the run
// from scheduled to running at began, in one transaction: one round trip
// to the archive where two were, at every run's start (issue 40's budget
// of transactions per run). ok false: the run is no longer scheduled (its
// task was changed or removed, or another attempt took it), and nothing
// is reserved.
func (s *Store) Start(ctx context.Context, rs []schedule.Reservation, runID string, began time.Time) (ok bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if slices.ContainsFunc(rs, func(r schedule.Reservation) bool { return r.Class == schedule.Exclusive }) {
		err = s.reserveExclusive(ctx, tx, rs)
	} else if len(rs) > 0 {
		err = s.reserveShared(ctx, tx, rs)
	}
	if err != nil {
		return false, err
	}
	ok, err = s.transition(ctx, tx, runID, []string{archive.StateScheduled}, archive.StateRunning, "", began, time.Time{}, began)
	if err != nil || !ok {
		return false, err
	}
	return true, tx.Commit()
}

// Finish records in tx (the transaction that stores the run's report,
// archive.Store.PutRunWith) what ends a run: its reservations end at
// ended, and it moves from running to state with its reason. now is the
// caller's clock, recorded as the run's update.
func (s *Store) Finish(ctx context.Context, tx *sql.Tx, runID, state, reason string, ended, now time.Time) error {
	if err := s.release(ctx, tx, runID, ended); err != nil {
		return err
	}
	_, err := s.transition(ctx, tx, runID, []string{archive.StateRunning}, state, reason, time.Time{}, ended, now)
	return err
}

// reserveExclusive takes rs in the order of their resources' names, not
// the task's (its source, then its destination): two runs a→b and b→a
// starting together each inserted their first host and then waited on
// the other's uncommitted row, and PostgreSQL broke that deadlock by
// failing one of them. In one order, the second waits for the first
// and is then told it is busy.
func (s *Store) reserveExclusive(ctx context.Context, tx *sql.Tx, rs []schedule.Reservation) error {
	rs = slices.SortedFunc(slices.Values(rs), func(a, b schedule.Reservation) int { return strings.Compare(a.Resource, b.Resource) })
	for _, r := range rs {
		if r.Class == schedule.Exclusive {
			if b, err := s.holder(ctx, tx, r); err != nil || b != nil {
				if b != nil {
					return b
				}
				return err
			}
		}
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO reservation (resource, lo, hi, run_id, class) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (run_id, resource) DO UPDATE SET lo = excluded.lo, hi = excluded.hi, class = excluded.class`),
			r.Resource, r.From.UTC(), r.To.UTC(), r.RunID, string(r.Class))
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "23P01" { // exclusion_violation: another daemon won the race
				return &schedule.Busy{Resource: r.Resource, RunID: "(another run, reserved at the same time)", Until: r.To}
			}
			return fmt.Errorf("reserving %s for %s: %w", r.Resource, r.RunID, err)
		}
	}
	return nil
}

// reserveShared takes reservations that check nothing (a background
// run's) in one statement, which is atomic by itself: one round trip to
// the archive at the run's start, where a transaction took four.
func (s *Store) reserveShared(ctx context.Context, ex execer, rs []schedule.Reservation) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO reservation (resource, lo, hi, run_id, class) VALUES `)
	args := make([]any, 0, 5*len(rs))
	seen := map[string]bool{}
	for i, r := range rs {
		if seen[r.Resource] { // one row may not be inserted twice in a statement
			continue
		}
		seen[r.Resource] = true
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?)")
		args = append(args, r.Resource, r.From.UTC(), r.To.UTC(), r.RunID, string(r.Class))
	}
	q.WriteString(` ON CONFLICT (run_id, resource) DO UPDATE SET lo = excluded.lo, hi = excluded.hi, class = excluded.class`)
	if _, err := ex.ExecContext(ctx, s.q(q.String()), args...); err != nil {
		return fmt.Errorf("reserving %s for %s: %w", rs[0].Resource, rs[0].RunID, err)
	}
	return nil
}

// holderQuery finds the exclusive reservation that overlaps a window on
// a resource: its arguments are the resource, the reserving run, and
// the window's end and start. It walks the index reservation_resource_hi
// from the window's start up, not the resource's whole history.
const holderQuery = `SELECT run_id, hi FROM reservation
		WHERE resource = ? AND class = 'exclusive' AND run_id <> ? AND lo < ? AND hi > ?
		ORDER BY hi DESC LIMIT 1`

// holder is the exclusive reservation that r would overlap, the one that
// ends last; nil if none.
func (s *Store) holder(ctx context.Context, tx *sql.Tx, r schedule.Reservation) (*schedule.Busy, error) {
	var b schedule.Busy
	err := tx.QueryRowContext(ctx, s.q(holderQuery), r.Resource, r.RunID, r.To.UTC(), r.From.UTC()).Scan(&b.RunID, &b.Until)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b.Resource, b.Until = r.Resource, b.Until.UTC()
	return &b, nil
}

// Release ends a run's reservations at end (its actual end), so that the
// time it did not use is free again.
func (s *Store) Release(ctx context.Context, runID string, end time.Time) error {
	return s.release(ctx, s.db, runID, end)
}

func (s *Store) release(ctx context.Context, ex execer, runID string, end time.Time) error {
	_, err := ex.ExecContext(ctx, s.q(`UPDATE reservation SET hi = CASE WHEN lo > ? THEN lo ELSE ? END WHERE run_id = ? AND hi > ?`),
		end.UTC(), end.UTC(), runID, end.UTC())
	return err
}

// RenewLease moves the end of a run's reservations that still hold at
// now (neither released nor lapsed) to until; ok is false when none
// still held. A lease that lapsed is not taken back: another run may
// hold its resources by now.
func (s *Store) RenewLease(ctx context.Context, runID string, now, until time.Time) (ok bool, err error) {
	res, err := s.db.ExecContext(ctx, s.q(`UPDATE reservation SET hi = ? WHERE run_id = ? AND hi > ? AND hi < ?`),
		until.UTC(), runID, now.UTC(), until.UTC())
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23P01" {
			return false, fmt.Errorf("renewing the lease of run %s: another run reserved its resources after it lapsed", runID)
		}
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Reservations lists the reservations that overlap [from, to).
func (s *Store) Reservations(ctx context.Context, from, to time.Time) ([]schedule.Reservation, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT resource, lo, hi, run_id, class FROM reservation WHERE lo < ? AND hi > ? ORDER BY resource, lo`),
		to.UTC(), from.UTC())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []schedule.Reservation
	for rows.Next() {
		var r schedule.Reservation
		var class string
		if err := rows.Scan(&r.Resource, &r.From, &r.To, &r.RunID, &class); err != nil {
			return nil, err
		}
		r.Class, r.From, r.To = schedule.Class(class), r.From.UTC(), r.To.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}
