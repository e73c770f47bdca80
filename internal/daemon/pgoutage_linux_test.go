package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// privatePG is a PostgreSQL cluster of this test's own (the suite's
// shared one must not be stopped under other tests), made with the
// repository's .ci/pg.sh; stop and start stop it and bring it back on
// the same port.
type privatePG struct {
	t           *testing.T
	dsn         string
	bin, dir    string
	port, state string
}

func newPrivatePG(t *testing.T) *privatePG {
	if os.Geteuid() != 0 {
		t.Skip("needs root: PostgreSQL runs as the postgres user")
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		t.Skip("PostgreSQL's binaries are not installed (.ci/run installs them)")
	}
	p := &privatePG{t: t, bin: filepath.Dir(bins[len(bins)-1]), state: filepath.Join(t.TempDir(), "pg.state")}
	cmd := exec.Command("bash", "../../.ci/pg.sh", "start")
	cmd.Env = append(os.Environ(), "PG_STATE="+p.state)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("starting a private PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		cmd := exec.Command("bash", "../../.ci/pg.sh", "stop")
		cmd.Env = append(os.Environ(), "PG_STATE="+p.state)
		cmd.Run()
	})
	p.dsn = strings.TrimSpace(string(out))
	st, err := os.ReadFile(p.state)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "dir="); ok {
			p.dir = v
		}
		if v, ok := strings.CutPrefix(line, "port="); ok {
			p.port = v
		}
	}
	return p
}

func (p *privatePG) ctl(args ...string) {
	p.t.Helper()
	all := append([]string{"-u", "postgres", "--", filepath.Join(p.bin, "pg_ctl"), "-D", filepath.Join(p.dir, "data"), "-w"}, args...)
	if out, err := exec.Command("runuser", all...).CombinedOutput(); err != nil {
		p.t.Fatalf("pg_ctl %v: %v: %s", args, err, out)
	}
}

func (p *privatePG) stop() { p.ctl("-m", "fast", "stop") }
func (p *privatePG) start() {
	p.ctl("-l", filepath.Join(p.dir, "log"), "-o", fmt.Sprintf("-p %s -k %s -c listen_addresses=127.0.0.1 -c fsync=off", p.port, p.dir), "start")
}

// PostgreSQL stops for 20 s while a test runs, and comes back: no daemon
// exits, the run that was running is recorded from the spool once, runs
// that could not be taken meanwhile are missed with a reason, and the
// schedule goes on.
func TestDaemonsOutliveTheArchive(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a minute long")
	}
	pg := newPrivatePG(t)
	b := newDaemon(t, "b", pg.dsn, true, nil)
	a := newDaemon(t, "a", pg.dsn, false, nil)
	done := map[string]chan error{}
	for name, d := range map[string]*daemon.Daemon{"a": a, "b": b} {
		ctx, cancel := context.WithCancel(context.Background())
		ch := make(chan error, 1)
		done[name] = ch
		go func() { ch <- d.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-ch })
	}
	tk := loopTask("tput", "a", "b", b.ServerPort(), 1, 4*time.Second, 3*time.Second, 0)
	if _, err := a.Schedule().PutTask(context.Background(), tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	st, err := archive.Open(context.Background(), pg.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sched := taskstore.New(st)
	// Stop the archive while a run is running.
	var cut *taskstore.SchedRun
	for deadline := time.Now().Add(30 * time.Second); cut == nil; {
		if time.Now().After(deadline) {
			t.Fatal("no run started within 30 s")
		}
		runs, err := sched.SchedRuns(context.Background(), taskstore.RunQuery{States: []string{archive.StateRunning}})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			cut = runs[0]
			break
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: the archive, for the run to start, until the deadline above
	}
	pg.stop()
	stopped := time.Now()
	time.Sleep(20 * time.Second) // load generator: the outage itself, 20 s without the archive
	if n := a.SpoolCount(); n != 1 {
		t.Fatalf("%d results spooled during the outage, want the cut run's", n)
	}
	pg.start()
	t.Logf("archive down for %v while run %s ran", time.Since(stopped).Round(time.Millisecond), cut.ID)
	for name, ch := range done {
		select {
		case err := <-ch:
			t.Fatalf("daemon %s exited during the outage: %v", name, err)
		default:
		}
	}
	// The schedule goes on: two more runs finish after the outage.
	back := time.Now()
	var runs []*taskstore.SchedRun
	for deadline := time.Now().Add(40 * time.Second); ; {
		runs, err = sched.SchedRuns(context.Background(), taskstore.RunQuery{})
		if err == nil {
			after := 0
			for _, r := range runs {
				if r.State == archive.StateFinished && r.ActualStart.After(back) {
					after++
				}
			}
			if after >= 2 && a.SpoolCount() == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the schedule did not go on after the outage (%v)", err)
		}
		time.Sleep(200 * time.Millisecond) // bounded poll: the archive, until the deadline above
	}
	missed := 0
	for _, r := range runs {
		t.Logf("%s %s %s %s", r.ID, r.Planned.Format("15:04:05.000"), r.State, r.Reason)
		switch r.State {
		case archive.StateFinished:
			rec, err := st.Get(context.Background(), r.ID)
			if err != nil {
				t.Fatalf("run %s finished but is not in the archive: %v", r.ID, err)
			}
			if rec.Attempts != 1 {
				t.Fatalf("run %s stored %d times", r.ID, rec.Attempts)
			}
		case archive.StateMissed, archive.StateFailed, archive.StateAborted:
			if r.Reason == "" || (r.Planned.After(stopped) && r.Planned.Before(back.Add(-5*time.Second)) && !strings.Contains(r.Reason, "archive was unreachable") && !strings.Contains(r.Reason, "past its slip")) {
				t.Fatalf("run %s %s without a reason", r.ID, r.State)
			}
			missed++
		}
	}
	got, err := st.Get(context.Background(), cut.ID)
	if err != nil || got.State != archive.StateFinished || got.Summary.ReceivedBps == nil {
		t.Fatalf("the run cut by the outage: %+v %v", got, err)
	}
	if missed == 0 {
		t.Fatal("no run was missed during a 20 s outage of a 4 s schedule")
	}
}
