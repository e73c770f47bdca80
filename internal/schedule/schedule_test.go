package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func task() *Task {
	return &Task{ID: "tabc", Name: "tput", Source: "a", Dest: "b", Args: []string{"client", "-t", "5"},
		Class: Exclusive, Duration: 10 * time.Second, Start: t0, Repeat: 30 * time.Second, Slip: 5 * time.Second}
}

func planned(rs []Run) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		out = append(out, r.Planned.Sub(t0))
	}
	return out
}

func eq(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPlanRepeatHorizon(t *testing.T) {
	tk := task()
	run, missed := Plan(tk, -1, t0, 2*time.Minute)
	if len(missed) != 0 {
		t.Fatalf("missed %v", missed)
	}
	want := []time.Duration{0, 30 * time.Second, 60 * time.Second, 90 * time.Second}
	if got := planned(run); !eq(got, want) {
		t.Fatalf("planned %v, want %v", got, want)
	}
	for i, r := range run {
		if r.Seq != i || r.ID != RunID("tabc", i) || r.Deadline != r.Planned.Add(5*time.Second) {
			t.Fatalf("run %d: %+v", i, r)
		}
	}
	// Planning again after the last planned run continues, without repeats.
	run2, _ := Plan(tk, 3, t0.Add(time.Minute), 2*time.Minute)
	if got := planned(run2); !eq(got, []time.Duration{120 * time.Second, 150 * time.Second}) {
		t.Fatalf("continued %v", got)
	}
}

func TestPlanMaxRunsUntilOneShot(t *testing.T) {
	tk := task()
	tk.MaxRuns = 2
	if run, _ := Plan(tk, -1, t0, time.Hour); len(run) != 2 {
		t.Fatalf("max-runs 2 planned %d", len(run))
	}
	tk.MaxRuns = 0
	tk.Until = t0.Add(61 * time.Second)
	if got := planned(first(Plan(tk, -1, t0, time.Hour))); !eq(got, []time.Duration{0, 30 * time.Second, 60 * time.Second}) {
		t.Fatalf("until: %v", got)
	}
	tk.Until = time.Time{}
	tk.Repeat = 0
	if got := planned(first(Plan(tk, -1, t0, time.Hour))); !eq(got, []time.Duration{0}) {
		t.Fatalf("one shot: %v", got)
	}
	tk.Paused = true
	if run, missed := Plan(tk, -1, t0, time.Hour); run != nil || missed != nil {
		t.Fatal("a paused task planned runs")
	}
}

func first(a, _ []Run) []Run { return a }

func TestPlanMissedWhileDown(t *testing.T) {
	tk := task()
	// The host comes back 100 s after the start: runs at 30, 60 and 90 s
	// are past their 5 s slip (the last one's deadline is 95 s).
	// Run 0 was planned before the host went down.
	now := t0.Add(100 * time.Second)
	run, missed := Plan(tk, 0, now, 30*time.Second)
	if got := planned(missed); !eq(got, []time.Duration{30 * time.Second, 60 * time.Second, 90 * time.Second}) {
		t.Fatalf("missed %v", got)
	}
	if got := planned(run); !eq(got, []time.Duration{120 * time.Second}) {
		t.Fatalf("to run %v", got)
	}
	// Within its slip, a run is still to run.
	run, missed = Plan(tk, 0, t0.Add(34*time.Second), 10*time.Second)
	if len(missed) != 0 || len(run) != 1 || run[0].Seq != 1 {
		t.Fatalf("within slip: run %v missed %v", run, missed)
	}
}

func TestPlanBoundsMissedAfterLongDowntime(t *testing.T) {
	tk := task()
	now := t0.Add(365 * 24 * time.Hour)
	run, missed := Plan(tk, 0, now, time.Minute)
	if len(missed) != MaxMissedPerPlan {
		t.Fatalf("missed %d, want the bound %d", len(missed), MaxMissedPerPlan)
	}
	if len(run) != 2 || run[0].Planned.Before(now) {
		t.Fatalf("after a year down: %v", planned(run))
	}
}

func TestRandomSlipIsStableAndBounded(t *testing.T) {
	tk := task()
	tk.RandomSlip = 10 * time.Second
	a, _ := Plan(tk, -1, t0, time.Hour)
	b, _ := Plan(tk, -1, t0, time.Hour)
	distinct := map[time.Duration]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("planning twice differs at %d: %v vs %v", i, a[i], b[i])
		}
		off := a[i].Planned.Sub(t0.Add(time.Duration(i) * tk.Repeat))
		if off < 0 || off >= tk.RandomSlip {
			t.Fatalf("run %d slips %v, outside [0, 10s)", i, off)
		}
		if a[i].Deadline != a[i].Planned.Add(tk.Slip) {
			t.Fatalf("deadline not from the slipped start")
		}
		distinct[off] = true
	}
	if len(distinct) < len(a)/2 {
		t.Fatalf("random slip takes %d values over %d runs", len(distinct), len(a))
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]func(*Task){
		"repeat":      func(t *Task) { t.Repeat = time.Millisecond },
		"slip":        func(t *Task) { t.Slip = -1 },
		"random-slip": func(t *Task) { t.RandomSlip = t.Repeat },
		"until":       func(t *Task) { t.Until = t.Start.Add(-time.Second) },
		"class":       func(t *Task) { t.Class = "loud" },
		"source":      func(t *Task) { t.Source = "" },
		"duration":    func(t *Task) { t.Duration = 0 },
	}
	if err := task().Validate(); err != nil {
		t.Fatal(err)
	}
	for field, mut := range cases {
		tk := task()
		mut(tk)
		err := tk.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), field+":") {
			t.Errorf("%s: %v", field, err)
		}
	}
}

func TestDirectionAndResources(t *testing.T) {
	tk := task()
	if tk.Direction() != Forward {
		t.Fatal(tk.Direction())
	}
	tk.Args = append(tk.Args, "-R")
	if tk.Direction() != Reverse {
		t.Fatal(tk.Direction())
	}
	if got := tk.ReservedResources(); len(got) != 2 || got[0] != "host:a" || got[1] != "host:b" {
		t.Fatal(got)
	}
	if id, seq, ok := SeqOf(RunID("t-x", 12)); !ok || id != "t-x" || seq != 12 {
		t.Fatal(id, seq, ok)
	}
	if DefineID("m.yaml", "tput", "a", "b") != DefineID("m.yaml", "tput", "a", "b") ||
		DefineID("m.yaml", "tput", "a", "b") == DefineID("m.yaml", "tput", "b", "a") {
		t.Fatal("task IDs are not a function of the definition")
	}
}

func TestConflicts(t *testing.T) {
	r := func(res string, from, to int, id string, c Class) Reservation {
		return Reservation{Resource: res, From: t0.Add(time.Duration(from) * time.Second), To: t0.Add(time.Duration(to) * time.Second), RunID: id, Class: c}
	}
	cases := []struct {
		a, b Reservation
		want bool
	}{
		{r("host:a", 0, 10, "1", Exclusive), r("host:a", 5, 15, "2", Exclusive), true},
		{r("host:a", 0, 10, "1", Exclusive), r("host:a", 10, 15, "2", Exclusive), false}, // touching is fine
		{r("host:a", 0, 10, "1", Exclusive), r("host:b", 5, 15, "2", Exclusive), false},
		{r("host:a", 0, 10, "1", Exclusive), r("host:a", 5, 15, "2", Background), false},
		{r("host:a", 0, 10, "1", Background), r("host:a", 5, 15, "2", Background), false},
		{r("host:a", 0, 10, "1", Exclusive), r("host:a", 2, 3, "1", Exclusive), false}, // the same run
	}
	for i, c := range cases {
		if got := Conflicts(c.a, c.b); got != c.want {
			t.Errorf("case %d: %v", i, got)
		}
		if got := Conflicts(c.b, c.a); got != c.want {
			t.Errorf("case %d reversed: %v", i, got)
		}
	}
}

func TestNextTryNeverLate(t *testing.T) {
	r := Run{ID: "t-1", Planned: t0, Deadline: t0.Add(5 * time.Second)}
	poll := time.Second
	// The holder's reservation ends in 0.3 s: look again then.
	at, ok, _ := NextTry(r, &Busy{Resource: "host:a", RunID: "x", Until: t0.Add(300 * time.Millisecond)}, t0, poll)
	if !ok || !at.Equal(t0.Add(300*time.Millisecond)) {
		t.Fatalf("busy until +0.3 s: %v %v", at, ok)
	}
	// It ends in an hour (the longest it may take): look again after poll,
	// since it releases when it ends.
	at, ok, _ = NextTry(r, &Busy{Resource: "host:a", RunID: "x", Until: t0.Add(time.Hour)}, t0, poll)
	if !ok || !at.Equal(t0.Add(poll)) {
		t.Fatalf("busy for long: %v %v", at, ok)
	}
	// The next look would be past the deadline: missed, with the reason.
	_, ok, reason := NextTry(r, &Busy{Resource: "host:a", RunID: "x", Until: t0.Add(time.Hour)}, t0.Add(4500*time.Millisecond), poll)
	if ok || !strings.Contains(reason, "no slot within slip") || !strings.Contains(reason, "run x") {
		t.Fatalf("busy past the deadline: %v %q", ok, reason)
	}
	if late, _ := Late(r, t0.Add(5*time.Second)); late {
		t.Fatal("at the deadline is not late")
	}
	if late, why := Late(r, t0.Add(5*time.Second+time.Millisecond)); !late || !strings.Contains(why, "past its slip") {
		t.Fatal("past the deadline ran late", why)
	}
	tk := task()
	rs := tk.Reservations("t-1", t0)
	if len(rs) != 2 || !rs[0].To.Equal(t0.Add(LeaseTTL)) || rs[1].Resource != "host:b" || tk.Hold() != 80*time.Second {
		t.Fatal(rs)
	}
}

func TestLeaseEnd(t *testing.T) {
	hold := 80 * time.Second
	for _, c := range []struct{ now, want time.Duration }{
		{0, LeaseTTL},                        // the first lease
		{5 * time.Second, 20 * time.Second},  // renewed: LeaseTTL after now
		{64 * time.Second, 79 * time.Second}, // still under the hold
		{70 * time.Second, hold},             // never past the hold
		{200 * time.Second, hold},
	} {
		if got := LeaseEnd(t0, t0.Add(c.now), hold); !got.Equal(t0.Add(c.want)) {
			t.Errorf("renewed at +%v: ends +%v, want +%v", c.now, got.Sub(t0), c.want)
		}
	}
	// A run shorter than a lease holds only its hold.
	if got := LeaseEnd(t0, t0, 10*time.Second); !got.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("short hold: %v", got.Sub(t0))
	}
}

func TestFirstPlanningStartsWithTheNextRun(t *testing.T) {
	tk := task()
	tk.Start = time.Unix(0, 0).UTC() // the mesh file's default: aligned to the epoch
	now := t0.Add(7 * time.Second)   // 2 s past a run's slip
	run, missed := Plan(tk, -1, now, time.Minute)
	if len(missed) != 0 {
		t.Fatalf("a new task recorded %d missed runs", len(missed))
	}
	if got := planned(run); !eq(got, []time.Duration{30 * time.Second, 60 * time.Second}) {
		t.Fatalf("planned %v", got)
	}
	// Even within its slip, a run already due is not started late by a
	// task's first planning.
	run, _ = Plan(tk, -1, t0.Add(3*time.Second), 30*time.Second)
	if got := planned(run); !eq(got, []time.Duration{30 * time.Second}) {
		t.Fatalf("within slip %v", got)
	}
	run, _ = Plan(tk, -1, t0, 10*time.Second)
	if got := planned(run); !eq(got, []time.Duration{0}) {
		t.Fatalf("at the instant %v", got)
	}
}

func TestNextIsBounded(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tk := &Task{ID: "t1", Start: start, Repeat: time.Second}
	from := start.Add(time.Hour + 500*time.Millisecond)
	got := Next(tk, from, 300*time.Hour, 1000)
	if len(got) != 1000 {
		t.Fatalf("%d runs, want the cap of 1000", len(got))
	}
	if want := start.Add(time.Hour + time.Second); !got[0].Planned.Equal(want) {
		t.Fatalf("first %v, want %v", got[0].Planned, want)
	}
	// Within a short horizon, every run and no more.
	if got := Next(tk, from, 10*time.Second, 1000); len(got) != 10 {
		t.Fatalf("%d runs in 10 s, want 10", len(got))
	}
	// With a random slip, a run based before from that starts after it
	// is there, and every run starts in [from, end).
	tk.Repeat, tk.RandomSlip = time.Minute, 50*time.Second
	end := from.Add(time.Hour)
	got = Next(tk, from, time.Hour, 1000)
	all, _ := Plan(tk, -1, start, 3*time.Hour)
	want := 0
	for _, r := range all {
		if !r.Planned.Before(from) && r.Planned.Before(end) {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("%d runs with random slip, want %d", len(got), want)
	}
	for _, r := range got {
		if r.Planned.Before(from) || !r.Planned.Before(end) {
			t.Fatalf("run %s at %v outside [%v, %v)", r.ID, r.Planned, from, end)
		}
	}
	tk.Paused = true
	if got := Next(tk, from, time.Hour, 10); got != nil {
		t.Fatal("a paused task has runs")
	}
}

// A lease is lost once its next renewal would come at or after its end,
// not a nanosecond before; one at its limit never is.
func TestLeaseLost(t *testing.T) {
	from := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	limit := from.Add(time.Minute)
	held := from.Add(LeaseTTL) // as taken, never renewed
	if LeaseLost(held, from.Add(LeaseRenew), limit) {
		t.Error("at the first renewal, with 10 s left: lost")
	}
	edge := held.Add(-LeaseRenew)
	if LeaseLost(held, edge.Add(-time.Nanosecond), limit) {
		t.Error("a nanosecond before the last renewal that could still come in time: lost")
	}
	if !LeaseLost(held, edge, limit) {
		t.Error("when the next renewal would come at the lease's end: not lost")
	}
	if !LeaseLost(held, held.Add(time.Second), limit) {
		t.Error("past the lease's end: not lost")
	}
	if LeaseLost(limit, limit.Add(-time.Second), limit) {
		t.Error("a lease at its limit (the test's own bound): lost")
	}
}

// A task's name, origin and group are printable text: a control
// character, NUL or a bidirectional override is refused.
func TestValidateRefusesControlCharactersInNames(t *testing.T) {
	base := Task{Name: "tput", Source: "a", Dest: "b", Args: []string{"client", "-t", "5"}, Start: time.Unix(0, 0), Duration: 7 * time.Second}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"x\x1b[2J", "a\x00b", "t\r[t1 h:1]", "x\u202ey", "\xff"} {
		for _, set := range []func(*Task){func(t *Task) { t.Name = bad }, func(t *Task) { t.Origin = bad }, func(t *Task) { t.Group = bad }} {
			tk := base
			set(&tk)
			if err := tk.Validate(); err == nil {
				t.Errorf("%+q accepted: %+v", bad, tk)
			}
		}
	}
}

// A trace task's probes are bounded at entry: the review's 64 hops × 10
// probes every second (640 a second) is refused with the repeat that
// would do, and a source's trace tasks together are bounded too.
func TestTraceProbeRatesAreBounded(t *testing.T) {
	tk := Task{Name: "path", Source: "a", Dest: "b", Args: []string{"trace", "--probes", "10", "--max-hops", "64", "--probe-timeout", "1ms"},
		Start: time.Unix(0, 0), Duration: 2 * time.Second, Repeat: time.Second, Class: Background}
	err := tk.Validate()
	if err == nil || !strings.Contains(err.Error(), "640 probes a second, over a task's limit of 10: repeat it every 1m4s or more") {
		t.Fatalf("640 probes a second: %v", err)
	}
	tk.Repeat = 64 * time.Second
	if err := tk.Validate(); err != nil || tk.ProbeRate() != 10 {
		t.Fatalf("10 probes a second: %v, rate %v", err, tk.ProbeRate())
	}
	var tasks []*Task
	for i := range 6 {
		c := tk
		c.Dest = fmt.Sprintf("h%d", i)
		tasks = append(tasks, &c)
	}
	if err := CheckProbeRates(tasks[:5]); err != nil {
		t.Fatalf("5 tasks of 10 a second: %v", err)
	}
	if err := CheckProbeRates(tasks); err == nil || !strings.Contains(err.Error(), "host a: its probe tasks (trace, ping, tcp-connect) send 60 probes a second, over a host's limit of 50") {
		t.Fatalf("6 tasks of 10 a second: %v", err)
	}
	if r := (&Task{Args: []string{"client", "-t", "5"}, Repeat: time.Second}).ProbeRate(); r != 0 {
		t.Fatalf("a client test's probe rate: %v", r)
	}
}

// Ping and tcp-connect probe hosts that may run nothing of ours (a third
// party's router or server): their tasks are held to the trace's bounds,
// per task and, all probe kinds together, per source.
func TestPingAndConnectRatesAreBounded(t *testing.T) {
	ping := Task{Name: "icmp", Source: "a", Dest: "b", Args: []string{"ping", "--count", "600", "--interval", "10ms"},
		Start: time.Unix(0, 0), Duration: 10 * time.Second, Repeat: 30 * time.Second, Class: Background}
	err := ping.Validate()
	if err == nil || !strings.Contains(err.Error(), "a ping of 600 echo requests (--count) every 30s is 20 probes a second, over a task's limit of 10: repeat it every 1m0s or more") {
		t.Fatalf("600 requests every 30 s: %v", err)
	}
	ping.Repeat = time.Minute
	if err := ping.Validate(); err != nil || ping.ProbeRate() != 10 {
		t.Fatalf("600 requests a minute: %v, rate %v", err, ping.ProbeRate())
	}
	connect := Task{Name: "syn", Source: "a", Dest: "c", Args: []string{"tcp-connect", "--count", "1000", "--tcp-port", "443"},
		Start: time.Unix(0, 0), Duration: 10 * time.Second, Repeat: time.Minute, Class: Background}
	if err := connect.Validate(); err == nil || !strings.Contains(err.Error(), "a tcp-connect of 1000 connects (--count) every 1m0s is 16.7 probes a second") {
		t.Fatalf("1,000 connects a minute: %v", err)
	}
	connect.Args[2] = "600"
	if err := connect.Validate(); err != nil {
		t.Fatal(err)
	}
	trace := Task{Name: "path", Source: "a", Dest: "d", Args: []string{"trace", "--probes", "10", "--max-hops", "64"},
		Start: time.Unix(0, 0), Duration: 70 * time.Second, Repeat: 64 * time.Second, Class: Background}
	if err := trace.Validate(); err != nil {
		t.Fatal(err)
	}
	// 10 + 10 + 10 a second from a; two more pings make 50, a third 60.
	tasks := []*Task{&ping, &connect, &trace}
	for i := range 3 {
		c := ping
		c.Dest = fmt.Sprintf("p%d", i)
		tasks = append(tasks, &c)
	}
	if err := CheckProbeRates(tasks[:5]); err != nil {
		t.Fatalf("50 probes a second: %v", err)
	}
	if err := CheckProbeRates(tasks); err == nil || !strings.Contains(err.Error(), "host a: its probe tasks (trace, ping, tcp-connect) send 60 probes a second") {
		t.Fatalf("60 probes a second: %v", err)
	}
}

// TestMaxRunsCountsFromFirstRun: --max-runs counts the task's runs from
// its first, not from the epoch. A task added with the default start
// (the epoch, for the grid of its repeat) and --max-runs 2 once planned
// nothing at all: its "first two runs" were in 1970.
func TestMaxRunsCountsFromFirstRun(t *testing.T) {
	added := t0.Add(7 * time.Second) // between two runs of the minute's grid
	cases := []struct {
		name      string
		start     time.Time
		wantFirst time.Time // the first run's instant
	}{
		{"default start (the epoch)", time.Unix(0, 0).UTC(), t0.Add(time.Minute)},
		{"start before it was added", t0.Add(-time.Hour), t0.Add(time.Minute)},
		{"start after it was added", t0.Add(time.Hour), t0.Add(time.Hour)},
		{"start the instant it was added", added, added},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := task()
			tk.Start, tk.Repeat, tk.MaxRuns, tk.Added = c.start, time.Minute, 2, added
			if err := tk.Validate(); err != nil {
				t.Fatal(err)
			}
			now := added // the daemon plans as soon as the task is added
			run, missed := Plan(tk, -1, now, 3*time.Hour)
			if len(missed) != 0 {
				t.Fatalf("missed %v", missed)
			}
			if len(run) != 2 {
				t.Fatalf("planned %d runs, want 2: %v", len(run), run)
			}
			if !run[0].Planned.Equal(c.wantFirst) || !run[1].Planned.Equal(c.wantFirst.Add(time.Minute)) {
				t.Fatalf("planned %v and %v, want %v and a minute later", run[0].Planned, run[1].Planned, c.wantFirst)
			}
			if run[0].Seq != tk.FirstSeq() || run[1].Seq != tk.FirstSeq()+1 {
				t.Fatalf("seqs %d, %d; first %d", run[0].Seq, run[1].Seq, tk.FirstSeq())
			}
			// Then none: planning on from the last, much later, and what
			// `schedule` lists from the instant it was added.
			if more, missed := Plan(tk, run[1].Seq, run[1].Planned.Add(time.Hour), 3*time.Hour); len(more) != 0 || len(missed) != 0 {
				t.Fatalf("after the 2 runs: planned %v, missed %v", more, missed)
			}
			if next := Next(tk, added, 24*time.Hour, 10); len(next) != 2 || next[0] != run[0] || next[1] != run[1] {
				t.Fatalf("Next lists %v, want the 2 planned runs", next)
			}
		})
	}
	// A task whose record is unknown (no Added) counts from its start.
	tk := task()
	tk.MaxRuns = 2
	if got := planned(Next(tk, t0.Add(-time.Hour), 24*time.Hour, 10)); !eq(got, []time.Duration{0, 30 * time.Second}) {
		t.Fatalf("without Added: %v", got)
	}
}
