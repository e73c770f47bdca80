// Package schedule is the model of scheduled tests: a task (a test
// between two hosts and how it repeats), the runs planned from it, and
// the reservation rules that keep throughput tests from colliding.
// Everything here is a pure function of its inputs and of the instant
// the caller passes as "now", so that it is tested exactly.
package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/testline"
)

// Class says what a run may overlap.
type Class string

const (
	// Exclusive runs (throughput tests) overlap no other exclusive run
	// on any resource they share.
	Exclusive Class = "exclusive"
	// Background runs (latency probes) may overlap anything.
	Background Class = "background"
)

// ParseClass reads a class name; "" is exclusive.
func ParseClass(s string) (Class, error) {
	switch Class(s) {
	case "", Exclusive:
		return Exclusive, nil
	case Background:
		return Background, nil
	}
	return "", fmt.Errorf("class %q: want exclusive or background", s)
}

// Direction is which way a test's data flows: the model's
// (measure.Direction), the source being the client. The grid's half-cells
// and the mesh's metrics name it with these same values.
type Direction = measure.Direction

const (
	Forward = measure.Forward // the source sends
	Reverse = measure.Reverse // the destination sends (-R)
	Bidir   = measure.Bidir
)

// Task is a test from one host and its repetition: to one destination,
// or (a rotating task) to each of a list in turn.
type Task struct {
	ID     string // stable: the same definition always has the same ID
	Name   string // the test's name, as the mesh file or the user gave it
	Source string // the host that runs the test (its daemon's queue)
	Dest   string // the host it tests to; a rotating task's first destination
	// DestAddr is where the source reaches the destination's server:
	// HOST or HOST:PORT.
	DestAddr string
	// Dests, when not empty, make the task rotating: run n goes to
	// Dests[n mod len(Dests)] and starts at Start + (n div len(Dests)) ×
	// Repeat + that destination's At, so each destination is tested once
	// every Repeat (a sampled mesh group's partners of one source over
	// its rotation). Dest and DestAddr are then the first's. Empty: every
	// run goes to Dest at Start + n × Repeat.
	Dests []Destination
	// Args is the test's command line without the destination: the
	// command ("client", "rr", "udpmon", "trace") and its flags.
	Args  []string
	Class Class
	// Duration is how long a run holds its reservation: the test's time
	// and a margin for its set-up and report.
	Duration time.Duration

	Start      time.Time     // the first run's instant
	Repeat     time.Duration // 0: one run
	Slip       time.Duration // how late a run may start
	RandomSlip time.Duration // each run starts a random [0, RandomSlip) late, the same every planning
	Until      time.Time     // zero: no end
	// MaxRuns bounds the task's runs, counted from its first: the run at
	// Start, or of a task added after Start (the default start is the
	// epoch, for its grid of Repeat) the first at or after Added. 0: no
	// limit.
	MaxRuns int
	// Added is when the task was stored (the archive's record of it);
	// zero counts MaxRuns from Start.
	Added  time.Time
	Paused bool

	// Resources a run reserves; empty means both hosts' interfaces.
	Resources []string
	Origin    string // "cli", or the mesh file's name
	// Group is the mesh file's group whose pair this task measures; ""
	// for a task not from a mesh file. The grid groups hosts by it.
	Group string

	Thresholds Thresholds // how the grid colours this test's results

	// test is the test its line describes, parsed once where the task
	// enters (Validate, SetTest); dir is its direction, or the archive's
	// stored column (SetDirection), so that the API's listings of
	// thousands of runs don't parse the line again for each (21 µs a
	// run).
	test *measure.Test
	dir  Direction
}

// Destination is one of a rotating task's destinations.
type Destination struct {
	Host string
	Addr string // where the source reaches its server: HOST or HOST:PORT; "" for Host
	// At is when its run starts in each of the task's repeats, from the
	// repeat's start: in [0, Repeat), each after the one before.
	At time.Duration
}

// MaxDests bounds a rotating task's destinations: a source's partners
// over a rotation are at most all the other hosts of a mesh.
const MaxDests = 2000

// Rotating says whether the task's runs go to a list of destinations.
func (t *Task) Rotating() bool { return len(t.Dests) > 0 }

// RunDest is where run seq goes: its host and address ("" for the
// host itself).
func (t *Task) RunDest(seq int) Destination {
	if len(t.Dests) == 0 {
		return Destination{Host: t.Dest, Addr: t.DestAddr}
	}
	return t.Dests[mod(seq, len(t.Dests))]
}

func mod(a, n int) int {
	if r := a % n; r >= 0 {
		return r
	}
	return a%n + n
}

// ForRun is the task as run seq sees it: a task to that run's
// destination alone, whose reservations, test line and address are the
// run's. A task of one destination is itself.
func (t *Task) ForRun(seq int) *Task {
	if len(t.Dests) == 0 {
		return t
	}
	d := t.RunDest(seq)
	c := *t
	c.Dest, c.DestAddr, c.Dests = d.Host, d.Addr, nil
	return &c
}

// DestText is the task's destination as a listing shows it: Dest, or
// a rotating task's first destination and how many follow it in turn.
func (t *Task) DestText() string {
	if len(t.Dests) <= 1 {
		return t.Dest
	}
	return fmt.Sprintf("%s +%d in turn", t.Dest, len(t.Dests)-1)
}

// DestHosts are the hosts the task tests to: Dest, or each of Dests.
func (t *Task) DestHosts() []string {
	if len(t.Dests) == 0 {
		return []string{t.Dest}
	}
	out := make([]string, len(t.Dests))
	for i, d := range t.Dests {
		out[i] = d.Host
	}
	return out
}

// Thresholds colour a test's last result: below the amber or red goodput,
// above the amber or red loss or RTT; with no result for StaleIntervals
// repeat intervals, grey. Zero fields do not apply.
type Thresholds struct {
	GoodputAmberBps float64 `json:"goodput_amber_bps,omitempty"`
	GoodputRedBps   float64 `json:"goodput_red_bps,omitempty"`
	LossAmberPct    float64 `json:"loss_amber_pct,omitempty"`
	LossRedPct      float64 `json:"loss_red_pct,omitempty"`
	RTTAmberMs      float64 `json:"rtt_amber_ms,omitempty"`
	RTTRedMs        float64 `json:"rtt_red_ms,omitempty"`
	StaleIntervals  int     `json:"stale_intervals,omitempty"`
}

// Direction is the test's direction, from its model (package measure),
// so -uR is reverse and --reverse=false is not. A line that doesn't
// parse is Forward.
func (t *Task) Direction() Direction {
	if t.dir != "" {
		return t.dir
	}
	m, err := t.Test()
	if err != nil {
		return Forward
	}
	return m.Direction()
}

// Test is the test the task's line describes: the one parsed where the
// task entered, or the line parsed now.
func (t *Task) Test() (measure.Test, error) {
	if t.test != nil {
		return *t.test, nil
	}
	return measure.ParseLine(t.Args)
}

// SetTest records the test parsed from the task's line where it entered
// (a mesh file's line, parsed once for all its tasks).
func (t *Task) SetTest(m measure.Test) {
	t.test = &m
	t.dir = m.Direction()
}

// SetDirection records the test's direction as read where the task
// entered (the archive's column, written from Direction): a value not a
// Direction is ignored, and the line is parsed when asked.
func (t *Task) SetDirection(d Direction) {
	switch d {
	case Forward, Reverse, Bidir:
		t.dir = d
	}
}

// ClearDirection forgets the recorded direction and parsed test, for
// comparing tasks by their definition alone.
func (t *Task) ClearDirection() { t.dir, t.test = "", nil }

// HostResource names a host's interfaces as a reservation resource.
func HostResource(host string) string { return "host:" + host }

// ReservedResources are the resources a run of t reserves.
func (t *Task) ReservedResources() []string {
	if len(t.Resources) > 0 {
		return append([]string(nil), t.Resources...)
	}
	if t.Source == t.Dest {
		return []string{HostResource(t.Source)}
	}
	return []string{HostResource(t.Source), HostResource(t.Dest)}
}

// MaxNameLen bounds a name: a task's, a mesh's, a group's.
const MaxNameLen = 200

// CheckName refuses a name that a terminal or a log would not show as
// it is: control characters (ESC, NUL, CR …), invisible format
// characters (bidirectional overrides, zero-width ones), bytes that are
// not UTF-8, and names over MaxNameLen bytes. A mesh file once named
// itself "\x1b[2J" and `mesh apply` cleared the screen.
func CheckName(s string) error {
	if len(s) > MaxNameLen {
		return fmt.Errorf("%d bytes, over the limit of %d", len(s), MaxNameLen)
	}
	if !utf8.ValidString(s) {
		return errors.New("not UTF-8 text")
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("the control character %U: a name is printable text", r)
		}
	}
	return nil
}

// Validate checks the task's fields, each error naming the field.
func (t *Task) Validate() error {
	for _, f := range []struct{ name, v string }{{"name", t.Name}, {"origin", t.Origin}, {"group", t.Group}} {
		if err := CheckName(f.v); err != nil {
			return fmt.Errorf("%s: %v", f.name, err)
		}
	}
	switch {
	case t.Name == "":
		return errors.New("name: empty")
	case t.Source == "":
		return errors.New("source: empty")
	case t.Dest == "":
		return errors.New("dest: empty")
	case len(t.Args) == 0:
		return errors.New("test: no command")
	case testline.CheckHostName(t.Source) != nil:
		return fmt.Errorf("source: %q: want a host name", clipped(t.Source))
	case testline.CheckHostName(t.Dest) != nil:
		return fmt.Errorf("dest: %q: want a host name", clipped(t.Dest))
	case t.Start.IsZero():
		return errors.New("start: not set")
	case t.Repeat < 0:
		return errors.New("repeat: negative")
	case t.Repeat > 0 && t.Repeat < time.Second:
		return errors.New("repeat: under one second")
	case t.Slip < 0:
		return errors.New("slip: negative")
	case t.RandomSlip < 0:
		return errors.New("random-slip: negative")
	case t.Repeat > 0 && t.RandomSlip >= t.Repeat:
		return errors.New("random-slip: not shorter than repeat")
	case t.MaxRuns < 0:
		return errors.New("max-runs: negative")
	case t.Duration <= 0:
		return errors.New("duration: not positive")
	case !t.Until.IsZero() && t.Until.Before(t.Start):
		return errors.New("until: before start")
	}
	if _, err := ParseClass(string(t.Class)); err != nil {
		return fmt.Errorf("class: %v", err)
	}
	// The test line and the destination are data: a line of measurement
	// flags and a host, never a command line (package testline), read as
	// the test's command reads it (package measure).
	m, err := measure.ParseLine(t.Args)
	if err != nil {
		return fmt.Errorf("test: %v", err)
	}
	t.SetTest(m)
	if per, what, ok := probesPerRun(m); ok {
		if r := t.probeRate(m); r > MaxProbeTaskRate {
			return fmt.Errorf("test: %s %s is %.3g probes a second, over a task's limit of %d: repeat it every %v or more, or send fewer",
				what, t.runsText(), r, MaxProbeTaskRate, time.Duration(float64(per*max(1, len(t.Dests)))/MaxProbeTaskRate*float64(time.Second)).Round(time.Second))
		}
	}
	if t.DestAddr != "" {
		if _, err := testline.ParseDest(t.DestAddr); err != nil {
			return fmt.Errorf("dest_addr: %v", err)
		}
	}
	return t.validateDests()
}

// Bounds of the probes that probe tasks (trace, ping, tcp-connect) send,
// averaged over their repeat: a task's (a trace at its largest, 64 hops
// × 10 probes, every 64 s), and a source host's over all its probe tasks
// (CheckProbeRates). Ping and tcp-connect measure hosts that may run
// nothing of ours, a third party's router or server, so they are held
// to the same bounds as a trace. Each run also paces its own probes (100
// a second at most: trace.MaxProbeRate, and ping's and tcp-connect's
// least --interval of 10 ms).
const (
	MaxProbeTaskRate = 10
	MaxProbeHostRate = 50
)

// probesPerRun is how many probes one run of a probe test sends at most
// (per destination), with what sends them as a report names it; ok is
// false for a test that is not a probe.
func probesPerRun(m measure.Test) (n int, what string, ok bool) {
	switch {
	case m.Trace != nil:
		n = m.Trace.Cfg.MaxHops * m.Trace.Cfg.Probes
		return n, fmt.Sprintf("a trace of up to %d probes (--max-hops × --probes)", n), true
	case m.Ping != nil:
		n = m.Ping.Cfg.Count
		return n, fmt.Sprintf("a ping of %d echo requests (--count)", n), true
	case m.TCPConnect != nil:
		n = m.TCPConnect.Cfg.Count
		return n, fmt.Sprintf("a tcp-connect of %d connects (--count)", n), true
	}
	return 0, "", false
}

// ProbeRate is the probes a second a probe task (trace, ping,
// tcp-connect) sends at most, averaged over its repeat: 0 for another
// test, or one that runs once.
func (t *Task) ProbeRate() float64 {
	m, err := t.Test()
	if err != nil {
		return 0
	}
	return t.probeRate(m)
}

func (t *Task) probeRate(m measure.Test) float64 {
	per, _, ok := probesPerRun(m)
	if !ok || t.Repeat <= 0 {
		return 0
	}
	return float64(per*max(1, len(t.Dests))) / t.Repeat.Seconds()
}

func (t *Task) runsText() string {
	if len(t.Dests) > 1 {
		return fmt.Sprintf("%d times every %v", len(t.Dests), t.Repeat)
	}
	return fmt.Sprintf("every %v", t.Repeat)
}

// CheckProbeRates refuses tasks whose probe tasks (trace, ping,
// tcp-connect) from one source send over MaxProbeHostRate probes a second
// between them.
func CheckProbeRates(tasks []*Task) error {
	by := map[string]float64{}
	models := map[string]*measure.Test{} // a mesh's tasks share a few lines
	for _, t := range tasks {
		if len(t.Args) == 0 || !IsProbe(t.Args[0]) {
			continue
		}
		line := strings.Join(t.Args, "\x00")
		m, seen := models[line]
		if !seen {
			if p, err := measure.ParseLine(t.Args); err == nil {
				m = &p
			}
			models[line] = m
		}
		if m != nil {
			by[t.Source] += t.probeRate(*m)
		}
	}
	hosts := make([]string, 0, len(by))
	for h := range by {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		if by[h] > MaxProbeHostRate {
			return fmt.Errorf("host %s: its probe tasks (trace, ping, tcp-connect) send %.3g probes a second, over a host's limit of %d: repeat them less often", h, by[h], MaxProbeHostRate)
		}
	}
	return nil
}

// IsProbe says whether a test line's command probes hosts that may run
// nothing of ours (trace, ping, tcp-connect), whose probes are bounded.
func IsProbe(command string) bool {
	switch measure.Kind(command) {
	case measure.KindTrace, measure.KindPing, measure.KindTCPConnect:
		return true
	}
	return false
}

// validateDests checks a rotating task's destinations.
func (t *Task) validateDests() error {
	if len(t.Dests) == 0 {
		return nil
	}
	switch {
	case len(t.Dests) > MaxDests:
		return fmt.Errorf("dests: %d, over the limit of %d", len(t.Dests), MaxDests)
	case t.Repeat == 0:
		return errors.New("dests: a task of several destinations repeats (no repeat given)")
	case len(t.Resources) > 0:
		return errors.New("resources: a task of several destinations reserves each run's own hosts")
	case t.Dest != t.Dests[0].Host || t.DestAddr != t.Dests[0].Addr:
		return errors.New("dest: not the first of dests")
	}
	for i, d := range t.Dests {
		switch {
		case testline.CheckHostName(d.Host) != nil:
			return fmt.Errorf("dests[%d]: %q: want a host name", i, clipped(d.Host))
		case d.At < 0 || d.At >= t.Repeat:
			return fmt.Errorf("dests[%d]: at %v: want within the repeat, [0, %v)", i, d.At, t.Repeat)
		case i > 0 && d.At <= t.Dests[i-1].At:
			return fmt.Errorf("dests[%d]: at %v: not after the one before (%v)", i, d.At, t.Dests[i-1].At)
		}
		if d.Addr != "" {
			if _, err := testline.ParseDest(d.Addr); err != nil {
				return fmt.Errorf("dests[%d]: addr: %v", i, err)
			}
		}
	}
	return nil
}

func clipped(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// DefineID is the ID a task gets from its definition: the same
// definition, applied twice, is the same task.
func DefineID(origin, name, source, dest string) string {
	h := sha256.Sum256([]byte(origin + "\x00" + name + "\x00" + source + "\x00" + dest))
	return "t" + fmt.Sprintf("%x", h[:6])
}

// Run is one planned run of a task.
type Run struct {
	ID      string
	TaskID  string
	Seq     int       // 0 for the first run
	Planned time.Time // the instant it starts, random slip included
	// Deadline is the latest instant it may start: Planned + Slip.
	Deadline time.Time
}

// RunID is the ID of a task's seq-th run (the archive's run ID too).
func RunID(taskID string, seq int) string { return taskID + "-" + strconv.Itoa(seq) }

// SeqOf reads the sequence number back from a run ID.
func SeqOf(runID string) (taskID string, seq int, ok bool) {
	i := strings.LastIndexByte(runID, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(runID[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return runID[:i], n, true
}

// randomSlip is run seq's random delay: a hash of the task and the
// sequence, so that planning twice gives the same instant.
func (t *Task) randomSlip(seq int) time.Duration {
	if t.RandomSlip <= 0 {
		return 0
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(seq))
	h := sha256.Sum256(append([]byte(t.ID), b[:]...))
	return time.Duration(binary.BigEndian.Uint64(h[:8]) % uint64(t.RandomSlip))
}

// At is run seq's plan, and whether the task has such a run.
func (t *Task) At(seq int) (Run, bool) {
	if seq < 0 || (t.MaxRuns > 0 && seq >= t.FirstSeq()+t.MaxRuns) || (t.Repeat == 0 && seq > 0) {
		return Run{}, false
	}
	base := t.base(seq)
	if !t.Until.IsZero() && base.After(t.Until) {
		return Run{}, false
	}
	p := base.Add(t.randomSlip(seq))
	return Run{ID: RunID(t.ID, seq), TaskID: t.ID, Seq: seq, Planned: p, Deadline: p.Add(t.Slip)}, true
}

// FirstSeq is the seq of the task's first run, from which MaxRuns
// counts: 0, or for a task added after its start the first run whose
// base instant is at or after Added (the runs before it were never
// planned: counting them spent a task added with the default start's
// runs before it was added, and it never ran).
func (t *Task) FirstSeq() int {
	if t.Added.IsZero() || !t.Added.After(t.Start) {
		return 0
	}
	return t.firstFrom(t.Added)
}

// base is run seq's instant before its random slip.
func (t *Task) base(seq int) time.Time {
	if len(t.Dests) == 0 {
		return t.Start.Add(time.Duration(seq) * t.Repeat)
	}
	n := len(t.Dests)
	return t.Start.Add(time.Duration(seq/n)*t.Repeat + t.Dests[seq%n].At)
}

// Plan is what the planner does with a task at now: the runs after
// seq `after` (-1: none planned yet) that start before now+horizon, each
// either to run (Planned, and its deadline not yet past) or missed
// (its deadline passed before anyone planned it: the host was down).
// Missed runs are counted, never run late. A paused task plans nothing.
func Plan(t *Task, after int, now time.Time, horizon time.Duration) (toRun, missed []Run) {
	if t.Paused {
		return nil, nil
	}
	seq := after + 1
	if after < 0 {
		// A task planned for the first time starts with its first run
		// still to come: the runs before it were never planned, so none
		// of them was missed, and none starts late because a daemon
		// started within its slip.
		seq = t.firstFrom(now)
	}
	// After a long stop, only MaxMissedPerPlan runs are recorded missed
	// one by one; the planner then jumps to the runs still to come.
	end := now.Add(horizon)
	for ; ; seq++ {
		r, ok := t.At(seq)
		if !ok || !r.Planned.Before(end) {
			return toRun, missed
		}
		if r.Deadline.Before(now) {
			missed = append(missed, r)
			if len(missed) >= MaxMissedPerPlan {
				// Skip to the first run still to come.
				if skip := t.firstFrom(now); skip > seq+1 {
					seq = skip - 1
				}
			}
			continue
		}
		toRun = append(toRun, r)
	}
}

// MaxMissedPerPlan bounds how many missed runs one planning records
// one by one; runs further back are skipped.
const MaxMissedPerPlan = 100

// firstFrom is the first seq whose base instant is at or after now.
func (t *Task) firstFrom(now time.Time) int {
	if t.Repeat <= 0 || !now.After(t.Start) {
		return 0
	}
	n := int(now.Sub(t.Start) / t.Repeat)
	if k := len(t.Dests); k > 0 {
		// The repeat now falls in, then the first of its runs not before now.
		from := t.Start.Add(time.Duration(n) * t.Repeat)
		return n*k + sort.Search(k, func(j int) bool { return !from.Add(t.Dests[j].At).Before(now) })
	}
	for b := t.Start.Add(time.Duration(n) * t.Repeat); b.Before(now); b = b.Add(t.Repeat) {
		n++
	}
	return n
}

// Next is at most max of the task's runs that start in [from, from+horizon),
// by seq: what the schedule will do, whether or not a daemon has planned
// it yet. Its cost is bounded by max whatever the task's repeat and the
// horizon. A paused task has none.
func Next(t *Task, from time.Time, horizon time.Duration, max int) []Run {
	return t.RunsIn(from, from.Add(horizon)).take(max)
}

// NextTo is Next for t's runs to host alone: of a rotating task, those
// to that one of its destinations (one run in len(Dests)), found without
// walking the others; of a task of one destination, all of them or none.
func NextTo(t *Task, host string, from time.Time, horizon time.Duration, max int) []Run {
	return t.RunsTo(host, from, from.Add(horizon)).take(max)
}

// Runs walks a task's runs that start in [from, end), by seq, one at a
// time: what merges thousands of tasks' runs by start without building
// more of them than the merge takes (the daemon's /api/schedule).
type Runs struct {
	t         *Task
	seq, step int
	from, end time.Time
	done      bool
}

// RunsIn walks the runs of Next: every one of the task's runs in
// [from, end). A paused task has none.
func (t *Task) RunsIn(from, end time.Time) *Runs {
	if t.Paused {
		return &Runs{done: true}
	}
	// A run whose base instant is up to RandomSlip before from may still
	// start at or after it.
	return &Runs{t: t, seq: t.firstFrom(from.Add(-t.RandomSlip)), step: 1, from: from, end: end}
}

// RunsTo walks the runs of NextTo: those of the task's runs in [from,
// end) that go to host.
func (t *Task) RunsTo(host string, from, end time.Time) *Runs {
	if len(t.Dests) == 0 {
		if t.Dest != host {
			return &Runs{done: true}
		}
		return t.RunsIn(from, end)
	}
	j := -1
	for i, d := range t.Dests {
		if d.Host == host {
			j = i
			break
		}
	}
	if j < 0 || t.Paused {
		return &Runs{done: true}
	}
	n := len(t.Dests)
	// Runs to host are seq j, j+n, j+2n …, one every Repeat; as in RunsIn,
	// one whose base instant is up to RandomSlip before from may still
	// start at or after it.
	m := 0
	if first := t.Start.Add(t.Dests[j].At); from.Add(-t.RandomSlip).After(first) {
		m = int(from.Add(-t.RandomSlip).Sub(first) / t.Repeat)
	}
	return &Runs{t: t, seq: j + m*n, step: n, from: from, end: end}
}

// Floor is an instant no run still to come starts before (the next
// seq's base instant: a run starts up to RandomSlip after its base, and
// bases grow with seq), and false when no run is left.
func (w *Runs) Floor() (time.Time, bool) {
	if w.done {
		return time.Time{}, false
	}
	if _, ok := w.t.At(w.seq); !ok {
		w.done = true
		return time.Time{}, false
	}
	b := w.t.base(w.seq)
	if !b.Before(w.end) {
		w.done = true
		return time.Time{}, false
	}
	return b, true
}

// Next is the next run in [from, end), and false when none is left.
// Runs planned before from, or at or after end while their base instant
// is before it (their random slip took them out), are passed over: at
// most RandomSlip's worth of them at either end.
func (w *Runs) Next() (Run, bool) {
	for !w.done {
		r, ok := w.t.At(w.seq)
		if !ok {
			break
		}
		seq := w.seq
		w.seq += w.step
		if r.Planned.Before(w.from) {
			continue
		}
		// Runs start in seq order up to RandomSlip apart; once a base
		// instant is at or past the end, none later starts before it.
		if !r.Planned.Before(w.end) {
			if !w.t.base(seq).Before(w.end) {
				break
			}
			continue
		}
		return r, true
	}
	w.done = true
	return Run{}, false
}

// take is at most max of the walk's next runs.
func (w *Runs) take(max int) []Run {
	var out []Run
	for len(out) < max {
		r, ok := w.Next()
		if !ok {
			break
		}
		out = append(out, r)
	}
	return out
}
