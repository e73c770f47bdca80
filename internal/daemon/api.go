package daemon

import (
	"bytes"
	"container/heap"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/grid"
	"github.com/wireperf/wireperf/internal/mesh"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
	"github.com/wireperf/wireperf/internal/testline"
)

// Mux is the daemon's HTTP handlers, all in one place: the JSON API
// here, and the views of views.go.
//
//	GET    /api/tasks?source=&after=&limit=  the tasks, a page at a time
//	POST   /api/tasks                    add or update one task (JSON)      token
//	DELETE /api/tasks/{id}               remove a task                      token
//	POST   /api/tasks/{id}/pause|resume                                     token
//	GET    /api/runs?src=&dst=&since=    planned runs and what became of them
//	GET    /api/schedule?host=&next=     the runs to come
//	POST   /api/schedule                 apply a mesh file (YAML body)      token
//	GET    /metrics                      Prometheus's text format
//	GET    /grid                         the mesh's grid page
func (d *Daemon) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tasks", d.read(d.getTasks))
	mux.HandleFunc("POST /api/tasks", d.write(d.postTask))
	mux.HandleFunc("DELETE /api/tasks/{id}", d.write(d.deleteTask))
	mux.HandleFunc("POST /api/tasks/{id}/pause", d.write(d.pauseTask(true)))
	mux.HandleFunc("POST /api/tasks/{id}/resume", d.write(d.pauseTask(false)))
	mux.HandleFunc("GET /api/runs", d.read(d.getRuns))
	mux.HandleFunc("GET /api/schedule", d.read(d.getSchedule))
	mux.HandleFunc("POST /api/schedule", d.write(d.postSchedule))
	mux.Handle("GET /metrics", d.readable(d.metrics.Handler()))
	mux.Handle("GET /grid", d.readable(grid.CachedHandler(d.gridView, gridPageTTL, d.cfg.Clock.Now)))
	mux.Handle("GET /grid/block", d.readable(grid.BlockHandler(d.gridBlock)))
	return mux
}

// gridPageTTL is how long the daemon shows one drawing of /grid: half
// the page's own refresh, so a watcher sees each minute's results, and
// the page costs its drawing at most twice a minute whoever loads it.
const gridPageTTL = 30 * time.Second

// maxBody bounds a request's body: a mesh file of thousands of hosts
// fits.
const maxBody = 4 << 20

type handler func(w http.ResponseWriter, r *http.Request) error

// httpError is an error with its status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func (d *Daemon) authorized(r *http.Request) bool {
	if d.cfg.Token == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(d.cfg.Token)) == 1
}

func (d *Daemon) serve(h handler, needToken bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Requests without a valid token are slowed per source, in one
		// bucket for wrong tokens (as wrong keys are) and one for reads
		// made without one: a source whose bucket is empty is answered 429
		// before its token is looked at, and only its first wrong token is
		// logged. A token holder costs nothing.
		if !d.authorized(r) {
			src, now := remoteHost(r.RemoteAddr), d.cfg.Clock.Now()
			limit, what := d.tokenLimit, "too many wrong tokens from this address: slow down"
			if !needToken {
				limit, what = d.readLimit, "too many reads without a token from this address: slow down, or send the token"
			}
			if !limit.Allow(src, now) {
				w.Header().Set("Retry-After", "1")
				writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": what})
				return
			}
			if !needToken {
				limit.Fail(src, now) // a read without a token spends one
			} else {
				if d.tokenLimit.Fail(src, now) {
					d.log.Warn("API request refused: no valid bearer token (further refusals of this address are not logged)",
						"method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="wireperf"`)
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "a valid bearer token is needed"})
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		ctx, cancel := context.WithTimeout(r.Context(), apiHandlerTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		if err := h(w, r); err != nil {
			status := http.StatusInternalServerError
			var he *httpError
			switch {
			case ctx.Err() != nil && errors.Is(err, ctx.Err()):
				// The client went, or the request's time ran out: the work
				// stopped there. Nobody may be left to read the answer.
				d.abandoned.Add(1)
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the request was stopped: " + err.Error()})
				return
			case errors.As(err, &he):
				status = he.status
			case errors.Is(err, archive.ErrNotFound):
				status = http.StatusNotFound
			}
			if status >= 500 {
				d.log.Error("API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeJSON(w, status, map[string]string{"error": archive.ErrorLine(err)})
		}
	}
}

// remoteHost is a request's source address without its port.
func remoteHost(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

func (d *Daemon) read(h handler) http.HandlerFunc  { return d.serve(h, d.cfg.ReadsNeedToken) }
func (d *Daemon) write(h handler) http.HandlerFunc { return d.serve(h, true) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// TaskJSON is a task in the API.
type TaskJSON struct {
	ID         string              `json:"id,omitempty"`
	Name       string              `json:"name"`
	Source     string              `json:"source"`
	Dest       string              `json:"dest"`
	DestAddr   string              `json:"dest_addr,omitempty"`
	Test       string              `json:"test"`
	Class      string              `json:"class,omitempty"`
	Reserve    string              `json:"reserve,omitempty"`
	Start      time.Time           `json:"start,omitzero"`
	Repeat     string              `json:"repeat,omitempty"`
	Slip       string              `json:"slip,omitempty"`
	RandomSlip string              `json:"random_slip,omitempty"`
	Until      time.Time           `json:"until,omitzero"`
	MaxRuns    int                 `json:"max_runs,omitempty"`
	Paused     bool                `json:"paused,omitempty"`
	Origin     string              `json:"origin,omitempty"`
	Thresholds schedule.Thresholds `json:"thresholds,omitzero"`
	// Dests are a rotating task's destinations (a sampled mesh group's
	// partners of one source), run n to the (n mod len)-th at its
	// offset; Dest is then the first.
	Dests []DestJSON `json:"dests,omitempty"`
}

// DestJSON is one of a rotating task's destinations.
type DestJSON struct {
	Host string `json:"host"`
	Addr string `json:"addr,omitempty"`
	At   string `json:"at,omitempty"` // its offset in the task's repeat
}

func durText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// TaskToJSON is a task as the API shows it.
func TaskToJSON(t *schedule.Task) TaskJSON {
	return TaskJSON{ID: t.ID, Name: t.Name, Source: t.Source, Dest: t.Dest, DestAddr: t.DestAddr, Test: strings.Join(t.Args, " "),
		Class: string(t.Class), Reserve: durText(t.Duration), Start: t.Start, Repeat: durText(t.Repeat), Slip: durText(t.Slip),
		RandomSlip: durText(t.RandomSlip), Until: t.Until, MaxRuns: t.MaxRuns, Paused: t.Paused, Origin: t.Origin, Thresholds: t.Thresholds,
		Dests: destsJSON(t.Dests)}
}

func destsJSON(ds []schedule.Destination) []DestJSON {
	var out []DestJSON
	for _, d := range ds {
		out = append(out, DestJSON{Host: d.Host, Addr: d.Addr, At: durText(d.At)})
	}
	return out
}

// Task reads a task given in the API or on the command line: the
// test line is checked, the reservation defaults to the test's time and
// a margin, the start to the epoch (runs on whole repeat periods), and
// the ID to one derived from the origin, name and pair.
func (j TaskJSON) Task() (*schedule.Task, error) {
	args, err := testline.Split(j.Test)
	if err != nil {
		return nil, fmt.Errorf("test: %v", err)
	}
	t := &schedule.Task{ID: j.ID, Name: j.Name, Source: j.Source, Dest: j.Dest, DestAddr: j.DestAddr, Args: args,
		Start: j.Start.UTC(), Until: j.Until, MaxRuns: j.MaxRuns, Paused: j.Paused, Origin: j.Origin, Thresholds: j.Thresholds}
	if !t.Until.IsZero() {
		t.Until = t.Until.UTC()
	}
	if t.Class, err = schedule.ParseClass(j.Class); err != nil {
		return nil, err
	}
	for name, p := range map[string]*struct {
		s string
		d *time.Duration
	}{"reserve": {j.Reserve, &t.Duration}, "repeat": {j.Repeat, &t.Repeat}, "slip": {j.Slip, &t.Slip}, "random_slip": {j.RandomSlip, &t.RandomSlip}} {
		if p.s == "" {
			continue
		}
		if *p.d, err = time.ParseDuration(p.s); err != nil {
			return nil, fmt.Errorf("%s: %q: want a duration such as 30s", name, p.s)
		}
	}
	for i, d := range j.Dests {
		at, err := time.Duration(0), error(nil)
		if d.At != "" {
			if at, err = time.ParseDuration(d.At); err != nil {
				return nil, fmt.Errorf("dests[%d].at: %q: want a duration such as 20s", i, d.At)
			}
		}
		if d.Addr == "" {
			d.Addr = d.Host
		}
		t.Dests = append(t.Dests, schedule.Destination{Host: d.Host, Addr: d.Addr, At: at})
	}
	if len(t.Dests) > 0 && t.Dest == "" {
		t.Dest = t.Dests[0].Host
	}
	if t.Origin == "" {
		t.Origin = "cli"
	}
	if t.Start.IsZero() {
		t.Start = time.Unix(0, 0).UTC()
	}
	if t.DestAddr == "" {
		t.DestAddr = t.Dest
	}
	if t.Duration == 0 && len(t.Args) > 0 {
		if t.Duration, err = schedule.ReserveFor(t.Args); err != nil {
			return nil, fmt.Errorf("test: %v", err)
		}
	}
	if t.ID == "" {
		t.ID = schedule.DefineID(t.Origin, t.Name, t.Source, t.Dest)
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// getTasks answers the tasks a page at a time, by ID: at most limit=
// (default DefaultTaskPage, at most MaxTaskPage) after the task after=,
// and no more than MaxAnswerBytes of JSON (a sampled group's task lists
// up to 2,000 destinations: about 100 kB). When tasks were left out, a
// Link header names the next page. The whole list of a 1,000-host
// sampled mesh was one answer of 209 MB.
func (d *Daemon) getTasks(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit := DefaultTaskPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxTaskPage {
			return badRequest("limit: %q: want 1 to %d", clip(s), MaxTaskPage)
		}
		limit = n
	}
	_, byID, err := d.tasks.get(r.Context(), d.sched, d.cfg.Clock.Now(), d.log)
	if err != nil {
		return err
	}
	source, after := q.Get("source"), q.Get("after")
	i := 0
	if after != "" {
		i, _ = slices.BinarySearchFunc(byID, after, func(t *schedule.Task, id string) int { return strings.Compare(t.ID, id) })
		if i < len(byID) && byID[i].ID == after {
			i++
		}
	}
	var body bytes.Buffer
	body.WriteString("[")
	n, more, last := 0, false, ""
	for ; i < len(byID); i++ {
		t := byID[i]
		if source != "" && t.Source != source {
			continue
		}
		if n == limit {
			more = true
			break
		}
		if i%ctxEvery == 0 && r.Context().Err() != nil {
			return r.Context().Err()
		}
		b, _ := json.MarshalIndent(TaskToJSON(t), "  ", "  ")
		if n > 0 && body.Len()+len(b)+8 > MaxAnswerBytes {
			more = true
			break
		}
		if n > 0 {
			body.WriteString(",")
		}
		body.WriteString("\n  ")
		body.Write(b)
		n, last = n+1, t.ID
	}
	if n > 0 {
		body.WriteString("\n")
	}
	body.WriteString("]\n")
	if more {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("after", last)
		nq.Set("limit", strconv.Itoa(limit))
		w.Header().Set("Link", fmt.Sprintf(`</api/tasks?%s>; rel="next"`, nq.Encode()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body.Bytes())
	return nil
}

// The task list's pages: MaxAnswerBytes bounds any answer the daemon
// builds in memory.
const (
	DefaultTaskPage = 100
	MaxTaskPage     = 1000
	MaxAnswerBytes  = 8 << 20
)

func (d *Daemon) postTask(w http.ResponseWriter, r *http.Request) error {
	var j TaskJSON
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return badRequest("task: %v", err)
	}
	t, err := j.Task()
	if err != nil {
		return badRequest("task: %v", err)
	}
	if t.ProbeRate() > 0 {
		// The source's trace tasks together, this one in its stored one's place.
		others, err := d.sched.Tasks(r.Context(), t.Source)
		if err != nil {
			return err
		}
		all := []*schedule.Task{t}
		for _, o := range others {
			if o.ID != t.ID {
				all = append(all, o)
			}
		}
		if err := schedule.CheckProbeRates(all); err != nil {
			return badRequest("task: %v", err)
		}
	}
	c, err := d.sched.PutTask(r.Context(), t, d.cfg.Clock.Now())
	if err != nil {
		return err
	}
	status := map[taskstore.TaskChange]int{taskstore.TaskAdded: http.StatusCreated, taskstore.TaskUpdated: http.StatusOK, taskstore.TaskUnchanged: http.StatusOK}[c]
	d.log.Info("task stored", "task", t.ID, "change", c)
	writeJSON(w, status, TaskToJSON(t))
	return nil
}

func (d *Daemon) deleteTask(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := d.sched.DeleteTask(r.Context(), id); err != nil {
		return err
	}
	d.log.Info("task removed", "task", id)
	writeJSON(w, http.StatusOK, map[string]string{"removed": id})
	return nil
}

func (d *Daemon) pauseTask(paused bool) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if err := d.sched.SetPaused(r.Context(), id, paused, d.cfg.Clock.Now()); err != nil {
			return err
		}
		d.log.Info("task paused or resumed", "task", id, "paused", paused)
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "paused": paused})
		return nil
	}
}

// RunJSON is a planned run in the API.
type RunJSON struct {
	ID          string    `json:"id"`
	Task        string    `json:"task"`
	Seq         int       `json:"seq"`
	Source      string    `json:"source"`
	Dest        string    `json:"dest"`
	Test        string    `json:"test"`
	Direction   string    `json:"direction"`
	Class       string    `json:"class"`
	Planned     time.Time `json:"planned"`
	Deadline    time.Time `json:"deadline"`
	ActualStart time.Time `json:"actual_start,omitzero"`
	Ended       time.Time `json:"ended,omitzero"`
	LagSeconds  *float64  `json:"lag_seconds,omitempty"`
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
}

// RunToJSON is a planned run as the API shows it.
func RunToJSON(r *taskstore.SchedRun) RunJSON {
	j := RunJSON{ID: r.ID, Task: r.TaskID, Seq: r.Seq, Source: r.Source, Dest: r.Dest, Test: r.Test, Direction: r.Direction,
		Class: string(r.Class), Planned: r.Planned, Deadline: r.Deadline, ActualStart: r.ActualStart, Ended: r.Ended, State: r.State, Reason: r.Reason}
	if lag, ok := r.Lag(); ok {
		s := lag.Seconds()
		j.LagSeconds = &s
	}
	return j
}

// CoarseReason is a failed run's reason as a reader without the token
// sees it: the child's last line told a closed port from a database from
// an HTTP server (a port-scan oracle through /api/runs), so it is cut to
// "refused by target", "timed out", "unreachable" or "failed". The
// reasons the daemon writes itself (missed, aborted, started late) name
// only the schedule and stay.
func CoarseReason(state, reason string) string {
	if state != archive.StateFailed || reason == "" {
		return reason
	}
	l := strings.ToLower(reason)
	switch {
	case strings.Contains(l, "refused") || strings.Contains(l, "reset by peer") || strings.Contains(l, "authentication") ||
		strings.Contains(l, "not a wireperf") || strings.Contains(l, "greeting") || strings.Contains(l, "handshake"):
		return "refused by target"
	case strings.Contains(l, "timed out") || strings.Contains(l, "timeout") || strings.Contains(l, "deadline"):
		return "timed out"
	case strings.Contains(l, "unreachable") || strings.Contains(l, "no route"):
		return "unreachable"
	}
	return "failed"
}

// reasonFor is a run's reason for r's reader: whole with the token,
// coarse without.
func (d *Daemon) reasonFor(r *http.Request, state, reason string) string {
	if d.authorized(r) {
		return reason
	}
	return CoarseReason(state, reason)
}

// viewReason is a run's reason on the views (/grid), which one drawing
// shows every reader: whole only when every reader has the token.
func (d *Daemon) viewReason(state, reason string) string {
	if d.cfg.ReadsNeedToken {
		return reason
	}
	return CoarseReason(state, reason)
}

// maxRuns bounds one answer.
const maxRuns = 10000

func (d *Daemon) getRuns(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rq := taskstore.RunQuery{Source: q.Get("src"), Dest: q.Get("dst"), Limit: maxRuns}
	if s := q.Get("since"); s != "" {
		now := d.cfg.Clock.Now()
		t, err := parseSince(s, now)
		if err != nil {
			return badRequest("since: %v", err)
		}
		if t.Before(now.Add(-MaxScheduleWindow)) {
			return badRequest("since: %q: over the limit of %v back", clip(s), MaxScheduleWindow)
		}
		rq.Since = t
	}
	if s := q.Get("state"); s != "" {
		rq.States = strings.Split(s, ",")
	}
	runs, err := d.sched.SchedRuns(r.Context(), rq)
	if err != nil {
		return err
	}
	out := []RunJSON{}
	for _, sr := range runs {
		j := RunToJSON(sr)
		j.Reason = d.reasonFor(r, j.State, j.Reason)
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseSince reads an RFC 3339 instant or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want an RFC 3339 instant or a duration such as 24h", s)
}

// Bounds of the schedule's and the runs' answers: a window and a page
// whatever a task's repeat, so that no query can make the daemon build
// an answer of gigabytes.
const (
	MaxScheduleWindow = 7 * 24 * time.Hour // next=, and since= back from now
	DefaultPage       = 1000               // runs per answer unless limit= says
	MaxPage           = 10000
)

// pageOf reads limit=: DefaultPage when not given.
func pageOf(q url.Values) (int, error) {
	s := q.Get("limit")
	if s == "" {
		return DefaultPage, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxPage {
		return 0, badRequest("limit: %q: want 1 to %d", clip(s), MaxPage)
	}
	return n, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// getSchedule answers the runs to come, a page at a time: at most limit=
// runs by start, from from= (default now) for next= (default 24 h, at
// most MaxScheduleWindow). When runs were left out, a Link header names
// the next page (RFC 8288), which starts after the last run given.
func (d *Daemon) getSchedule(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	next := 24 * time.Hour
	if s := q.Get("next"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil || v <= 0 {
			return badRequest("next: %q: want a duration such as 24h", clip(s))
		}
		if v > MaxScheduleWindow {
			return badRequest("next: %v, over the limit of %v", v, MaxScheduleWindow)
		}
		next = v
	}
	limit, err := pageOf(q)
	if err != nil {
		return err
	}
	now := d.cfg.Clock.Now()
	from, end := now, now.Add(next)
	var after string
	if s := q.Get("from"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || t.Before(now.Add(-MaxScheduleWindow)) || t.After(now.Add(MaxScheduleWindow)) {
			return badRequest("from: %q: want an RFC 3339 instant within %v of now", clip(s), MaxScheduleWindow)
		}
		from, after = t, q.Get("after")
	}
	if e := q.Get("end"); e != "" {
		t, err := time.Parse(time.RFC3339Nano, e)
		if err != nil || t.After(now.Add(MaxScheduleWindow)) {
			return badRequest("end: %q: want an RFC 3339 instant within %v of now", clip(e), MaxScheduleWindow)
		}
		end = t
	}
	tasks, err := d.tasksOf(r.Context(), "")
	if err != nil {
		return err
	}
	p, err := UpcomingPage(r.Context(), tasks, q.Get("host"), from, after, end, limit)
	d.scheduleBuilt.Add(int64(p.Built))
	if err != nil {
		return err
	}
	runs := p.Runs
	out := make([]RunJSON, 0, len(runs))
	for _, sr := range runs {
		out = append(out, RunToJSON(sr))
	}
	if p.More && len(runs) > 0 {
		last := runs[len(runs)-1]
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Del("next")
		nq.Set("from", last.Planned.UTC().Format(time.RFC3339Nano))
		nq.Set("after", last.ID)
		nq.Set("end", end.UTC().Format(time.RFC3339Nano))
		nq.Set("limit", strconv.Itoa(limit))
		w.Header().Set("Link", fmt.Sprintf(`</api/schedule?%s>; rel="next"`, nq.Encode()))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// Upcoming is the runs the tasks plan in [now, now+next) that touch host
// ("" for every host), by start: what the schedule will do, whether or
// not a daemon has planned it yet. At most MaxPage runs, the earliest.
func Upcoming(tasks []*schedule.Task, host string, now time.Time, next time.Duration) []*taskstore.SchedRun {
	p, _ := UpcomingPage(context.Background(), tasks, host, now, "", now.Add(next), MaxPage)
	return p.Runs
}

// SchedulePage is one page of the runs to come.
type SchedulePage struct {
	Runs []*taskstore.SchedRun
	More bool // runs were left out
	// Built counts the runs the page computed: those it gives, at most
	// one more, and those of each task that a page boundary or a random
	// slip passed over (a few a task). It is the page's cost, whatever
	// the tasks' repeats and the window.
	Built int
}

// UpcomingPage is one page of Upcoming: at most limit runs that start in
// [from, end), by start and then ID, after the run named after (which
// starts at from) when after is set. The tasks' runs are merged by start
// (a heap of the tasks, by the earliest instant each can still start a
// run at, and one of the runs built and not yet given), so a page builds
// about limit runs and a few a task, not limit a task. It stops with
// ctx's error when ctx ends (the client went), looking every
// ctxEvery runs or tasks.
func UpcomingPage(ctx context.Context, tasks []*schedule.Task, host string, from time.Time, after string, end time.Time, limit int) (SchedulePage, error) {
	var p SchedulePage
	if !end.After(from) || limit <= 0 {
		return p, nil
	}
	walks := make(walkHeap, 0, len(tasks))
	for i, t := range tasks {
		if i%ctxEvery == 0 && ctx.Err() != nil {
			return p, ctx.Err()
		}
		var w *schedule.Runs
		if host == "" || t.Source == host {
			w = t.RunsIn(from, end)
		} else {
			w = t.RunsTo(host, from, end) // a rotating task's runs to host alone
		}
		if floor, ok := w.Floor(); ok {
			walks = append(walks, taskWalk{t: t, w: w, floor: floor})
		}
	}
	heap.Init(&walks)
	var built builtHeap
	for step := 1; len(p.Runs) <= limit; step++ { // one more than the page, to know if there is more
		if step%ctxEvery == 0 && ctx.Err() != nil {
			return p, ctx.Err()
		}
		// The earliest run built is the next of the page when no task can
		// still start one before it (nor at its instant: the ID decides).
		if len(built) > 0 && (len(walks) == 0 || built[0].r.Planned.Before(walks[0].floor)) {
			b := heap.Pop(&built).(builtRun)
			if after != "" && b.r.Planned.Equal(from) && b.r.ID <= after {
				continue
			}
			p.Runs = append(p.Runs, taskstore.NewSchedRun(b.t, b.r))
			continue
		}
		if len(walks) == 0 {
			break
		}
		tw := &walks[0]
		if r, ok := tw.w.Next(); ok {
			heap.Push(&built, builtRun{t: tw.t, r: r})
			p.Built++
		}
		if floor, ok := tw.w.Floor(); ok {
			tw.floor = floor
			heap.Fix(&walks, 0)
		} else {
			heap.Pop(&walks)
		}
	}
	if len(p.Runs) > limit {
		p.Runs, p.More = p.Runs[:limit], true
	}
	return p, nil
}

// ctxEvery is how many tasks, or steps of its merge (a run built or
// given), UpcomingPage takes between two looks at its context: some
// microseconds' work.
const ctxEvery = 64

// taskWalk is a task's runs still to merge, and the earliest instant
// the next of them can start.
type taskWalk struct {
	t     *schedule.Task
	w     *schedule.Runs
	floor time.Time
}

type walkHeap []taskWalk

func (h walkHeap) Len() int           { return len(h) }
func (h walkHeap) Less(i, j int) bool { return h[i].floor.Before(h[j].floor) }
func (h walkHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *walkHeap) Push(x any)        { *h = append(*h, x.(taskWalk)) }
func (h *walkHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// builtRun is a run built and not yet on the page.
type builtRun struct {
	t *schedule.Task
	r schedule.Run
}

type builtHeap []builtRun

func (h builtHeap) Len() int { return len(h) }
func (h builtHeap) Less(i, j int) bool {
	if !h[i].r.Planned.Equal(h[j].r.Planned) {
		return h[i].r.Planned.Before(h[j].r.Planned)
	}
	return h[i].r.ID < h[j].r.ID
}
func (h builtHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *builtHeap) Push(x any)   { *h = append(*h, x.(builtRun)) }
func (h *builtHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (d *Daemon) postSchedule(w http.ResponseWriter, r *http.Request) error {
	name := r.URL.Query().Get("file")
	if name == "" {
		name = "mesh.yaml"
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return badRequest("reading the mesh file: %v", err)
	}
	m, err := mesh.Parse(name, data)
	if err != nil {
		return badRequest("%v", err)
	}
	warning, err := m.CheckUtilisation() // a host busier than 100% is refused, as by `mesh apply`
	if err != nil {
		return badRequest("%v", err)
	}
	if warning != "" {
		d.log.Warn("mesh busy", "mesh", m.Name, "warning", warning)
	}
	res, err := d.sched.ApplyTasks(r.Context(), m.Name, m.Tasks(), d.cfg.Clock.Now())
	if err != nil {
		return err
	}
	d.log.Info("mesh applied", "mesh", m.Name, "added", res.Added, "updated", res.Updated, "unchanged", res.Unchanged, "removed", res.Removed)
	writeJSON(w, http.StatusOK, map[string]any{"mesh": m.Name, "added": res.Added, "updated": res.Updated, "unchanged": res.Unchanged, "removed": res.Removed})
	return nil
}
