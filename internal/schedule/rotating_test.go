package schedule

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// rotating is a task from a to b, c and d in turn: each once a minute,
// at +0 s, +20 s and +45 s of it.
func rotating() *Task {
	tk := task()
	tk.Repeat = time.Minute
	tk.Dests = []Destination{{Host: "b", Addr: "b:5201", At: 0}, {Host: "c", Addr: "c.example:6000", At: 20 * time.Second}, {Host: "d", At: 45 * time.Second}}
	tk.Dest, tk.DestAddr = "b", "b:5201"
	return tk
}

// Run n goes to Dests[n mod 3] at its offset in its repeat; the planner
// plans them in that order, from the next one to come when a task is
// planned for the first time, and Next finds the same runs.
func TestRotatingRuns(t *testing.T) {
	tk := rotating()
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	run, missed := Plan(tk, -1, t0, 2*time.Minute)
	if len(missed) != 0 {
		t.Fatalf("missed %v", missed)
	}
	want := []time.Duration{0, 20 * time.Second, 45 * time.Second, 60 * time.Second, 80 * time.Second, 105 * time.Second}
	if got := planned(run); !eq(got, want) {
		t.Fatalf("planned %v, want %v", got, want)
	}
	var dests []string
	for _, r := range run {
		dests = append(dests, tk.RunDest(r.Seq).Host)
	}
	if got := strings.Join(dests, " "); got != "b c d b c d" {
		t.Fatalf("destinations %s", got)
	}
	// First planned at +1m21s: the next run is seq 5 (+1m45s, to d).
	run, _ = Plan(tk, -1, t0.Add(81*time.Second), time.Minute)
	if len(run) != 3 || run[0].Seq != 5 || run[0].Planned != t0.Add(105*time.Second) || tk.RunDest(5).Host != "d" {
		t.Fatalf("from +1m21s: %+v", run)
	}
	// From a run's own instant, it is the first.
	if run, _ := Plan(tk, -1, t0.Add(80*time.Second), time.Second); len(run) != 1 || run[0].Seq != 4 {
		t.Fatalf("from +1m20s: %+v", run)
	}
	next := Next(tk, t0.Add(30*time.Second), time.Minute, 10)
	if got := planned(next); !eq(got, []time.Duration{45 * time.Second, 60 * time.Second, 80 * time.Second}) {
		t.Fatalf("next %v", got)
	}
	// After a stop, the runs whose deadline passed are missed, each to its own destination.
	_, missed = Plan(tk, 0, t0.Add(61*time.Second+tk.Slip), time.Second)
	if len(missed) != 3 || missed[0].Seq != 1 || missed[2].Seq != 3 {
		t.Fatalf("missed %+v", missed)
	}
}

// A run sees the task as a task to its own destination: its
// reservations are its source's and that destination's, its address
// that destination's; a task of one destination is itself.
func TestForRun(t *testing.T) {
	tk := rotating()
	r := tk.ForRun(4)
	if r.Dest != "c" || r.DestAddr != "c.example:6000" || r.Rotating() || r.ID != tk.ID || r.Start != tk.Start {
		t.Fatalf("run 4: %+v", r)
	}
	if got := r.ReservedResources(); !slices.Equal(got, []string{"host:a", "host:c"}) {
		t.Fatalf("run 4 reserves %v", got)
	}
	if r := tk.ForRun(5); r.Dest != "d" || r.DestAddr != "" {
		t.Fatalf("run 5: %s %q", r.Dest, r.DestAddr)
	}
	if len(tk.Dests) != 3 || tk.Dest != "b" {
		t.Fatal("ForRun changed the task")
	}
	one := task()
	if one.ForRun(7) != one || one.RunDest(7) != (Destination{Host: "b"}) || !slices.Equal(one.DestHosts(), []string{"b"}) {
		t.Fatal("a task of one destination is not itself for each run")
	}
	if !slices.Equal(tk.DestHosts(), []string{"b", "c", "d"}) {
		t.Fatalf("dest hosts %v", tk.DestHosts())
	}
	if tk.DestText() != "b +2 in turn" || one.DestText() != "b" {
		t.Fatalf("listed as %q and %q", tk.DestText(), one.DestText())
	}
}

func TestValidateRotating(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Task)
		want string
	}{
		{"no repeat", func(t *Task) { t.Repeat = 0 }, "dests: a task of several destinations repeats"},
		{"dest not the first", func(t *Task) { t.Dest = "c" }, "dest: not the first of dests"},
		{"addr not the first's", func(t *Task) { t.DestAddr = "" }, "dest: not the first of dests"},
		{"bad host", func(t *Task) { t.Dests[1].Host = "-x" }, `dests[1]: "-x": want a host name`},
		{"bad addr", func(t *Task) { t.Dests[2].Addr = "--exec" }, "dests[2]: addr:"},
		{"past the repeat", func(t *Task) { t.Dests[2].At = time.Minute }, "dests[2]: at 1m0s: want within the repeat, [0, 1m0s)"},
		{"out of order", func(t *Task) { t.Dests[2].At = 20 * time.Second }, "dests[2]: at 20s: not after the one before (20s)"},
		{"resources", func(t *Task) { t.Resources = []string{"host:a"} }, "resources: a task of several destinations"},
		{"too many", func(t *Task) {
			t.Repeat = time.Hour
			t.Dests = make([]Destination, MaxDests+1)
			for i := range t.Dests {
				t.Dests[i] = Destination{Host: "h", At: time.Duration(i) * time.Second}
			}
			t.Dest, t.DestAddr = "h", ""
		}, "dests: 2001, over the limit of 2000"},
	} {
		tk := rotating()
		c.edit(tk)
		if err := tk.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// NextTo finds a rotating task's runs to one destination: the same runs
// as Next's filtered to it, random slip included; a task of one
// destination has all of its runs to Dest and none to another host.
func TestNextTo(t *testing.T) {
	tk := rotating()
	tk.RandomSlip = 15 * time.Second
	for _, from := range []time.Duration{0, 10 * time.Second, 50 * time.Second, 7*time.Minute + 3*time.Second} {
		f := t0.Add(from)
		for _, host := range []string{"b", "c", "d", "x"} {
			var want []time.Duration
			for _, r := range Next(tk, f, 5*time.Minute, 1000) {
				if tk.RunDest(r.Seq).Host == host {
					want = append(want, r.Planned.Sub(t0))
				}
			}
			got := planned(NextTo(tk, host, f, 5*time.Minute, 1000))
			if !eq(got, want) || (host != "x" && len(got) < 4) {
				t.Fatalf("from +%v to %s: %v, want %v", from, host, got, want)
			}
			if few := NextTo(tk, host, f, 5*time.Minute, 2); len(few) > 2 {
				t.Fatalf("max 2: %d runs", len(few))
			}
		}
	}
	one := task()
	if len(NextTo(one, "b", t0, time.Minute, 10)) != 2 || NextTo(one, "c", t0, time.Minute, 10) != nil {
		t.Fatal("a task of one destination")
	}
}
