package daemon_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
)

// A udpmon task's reservation comes from its model: its grid's sending
// and each point's overhead, not a 10 s guess. This one sends 14,000
// datagrams 1 ms apart (14 s; the guess reserved 12 s with its margin),
// and it runs to its end under the daemon (about 14.5 s on a quiet host).
func TestUDPMonTaskReservesItsGridAndRunsToTheEnd(t *testing.T) {
	t.Parallel()
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, true, nil)
	task, err := daemon.TaskJSON{Name: "grid", Source: "a", Dest: "a", DestAddr: fmt.Sprintf("127.0.0.1:%d", d.ServerPort()),
		Test: "udpmon --sizes 64 --spacing 1ms --count 14000", Slip: "10s", Start: time.Now().Truncate(time.Second).Add(3 * time.Second), MaxRuns: 1}.Task()
	if err != nil {
		t.Fatal(err)
	}
	if task.Duration < 14*time.Second+time.Second {
		t.Fatalf("reservation %v, want its 14 s of sending, a point's set-up and the margin", task.Duration)
	}
	if _, err := d.Schedule().PutTask(context.Background(), task, time.Now()); err != nil {
		t.Fatal(err)
	}
	stop := start(t, d)
	st, err := archive.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := waitDone(t, st, 1, task.Hold()+30*time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	took := r.Ended.Sub(r.ActualStart)
	t.Logf("reserved %v, ran %v", task.Duration, took)
	if r.State != archive.StateFinished {
		t.Fatalf("run %s: %s (%s)", r.ID, r.State, r.Reason)
	}
	// The reservation plans the hosts' time; the run may take a little
	// longer on a busy host (a process to start, a point's set-up) and is
	// stopped only at its hold (twice the reservation and a minute).
	if took < 14*time.Second || took > task.Hold() {
		t.Fatalf("ran %v: want its 14 s of sending, within the %v its reservation allows", took, task.Hold())
	}
	rec, err := st.Get(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != archive.StateFinished || len(rec.Document) == 0 {
		t.Fatalf("archived run: %s, %d bytes of document", rec.State, len(rec.Document))
	}
}
