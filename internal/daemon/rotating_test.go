package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/testutil/promtest"
)

// A rotating task's successive runs go to its successive destinations:
// each is planned to its own destination, reserves the source and that
// destination while it runs, dials that destination's address, and is
// recorded as a run to it.
func TestRotatingTaskRunsToEachDestinationInTurn(t *testing.T) {
	t.Parallel()
	dsn := archivetest.Backends(t)["sqlite"]
	ctx := context.Background()
	const doc = `{"start":{"test_start":{"protocol":"TCP","num_streams":1,"duration":1}},
		"end":{"sum_sent":{"seconds":1,"bytes":15375000,"bits_per_second":123000000},"sum_received":{"seconds":1,"bytes":15375000,"bits_per_second":123000000}}}`
	type seen struct {
		dest, dialed string
		reserved     []string
	}
	var ran []seen
	var d *daemon.Daemon
	// The daemon's clock is the test's: each run is executed at its own
	// instant, however long the one before took (its runs are a second
	// apart, and their deadlines too).
	clk := newFakeClock(fakeT.Add(-10 * time.Second))
	d = newDaemon(t, "a", dsn, false, func(c *daemon.Config) {
		c.Binary = "/nonexistent/wireperf"
		c.Clock = clk
		c.RunTest = func(ctx context.Context, tk *schedule.Task) ([]byte, error) {
			args, err := daemon.TestArgs(tk, nil)
			if err != nil {
				return nil, err
			}
			now := clk.Now()
			rs, err := d.Schedule().Reservations(ctx, now, now.Add(time.Millisecond))
			if err != nil {
				return nil, err
			}
			var held []string
			for _, r := range rs {
				held = append(held, r.Resource)
			}
			slices.Sort(held)
			ran = append(ran, seen{tk.Dest, args[len(args)-1], held})
			return []byte(doc), nil
		}
	})
	defer d.CloseQueue()
	defer d.Store().Close()

	tk := loopTask("tput", "a", "b", 5201, 1, time.Second, 30*time.Second, 4)
	tk.ID = schedule.DefineID("test", "tput", "a", "slot 0")
	tk.Start = fakeT
	tk.Dests = []schedule.Destination{{Host: "b", Addr: "127.0.0.1:5201"}, {Host: "c", Addr: "127.0.0.2:5202", At: 10 * time.Millisecond},
		{Host: "d", At: 20 * time.Millisecond}}
	tk.Dest, tk.DestAddr = "b", "127.0.0.1:5201"
	if _, err := d.Schedule().PutTask(ctx, tk, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if err := d.PlanOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for seq := range 4 {
		r, err := d.Schedule().GetSchedRun(ctx, schedule.RunID(tk.ID, seq))
		if err != nil {
			t.Fatalf("run %d not planned: %v", seq, err)
		}
		clk.set(r.Planned)
		if err := d.Execute(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	want := []seen{
		{"b", "127.0.0.1", []string{"host:a", "host:b"}},
		{"c", "127.0.0.2", []string{"host:a", "host:c"}},
		{"d", "d", []string{"host:a", "host:d"}},
		{"b", "127.0.0.1", []string{"host:a", "host:b"}},
	}
	if len(ran) != len(want) {
		t.Fatalf("ran %+v, want %+v", ran, want)
	}
	for i := range want {
		if ran[i].dest != want[i].dest || ran[i].dialed != want[i].dialed || !slices.Equal(ran[i].reserved, want[i].reserved) {
			t.Errorf("run %d: %+v, want %+v", i, ran[i], want[i])
		}
	}
	for seq, w := range want {
		dest := w.dest
		id := schedule.RunID(tk.ID, seq)
		r, err := d.Schedule().GetSchedRun(ctx, id)
		if err != nil || r.Dest != dest || r.State != archive.StateFinished {
			t.Fatalf("run %d: %+v %v, want finished to %s", seq, r, err, dest)
		}
		rec, err := d.Store().Get(ctx, id)
		if err != nil || rec.RemoteHost != dest || !strings.HasSuffix(rec.Cmdline, " -- "+w.dialed) {
			t.Fatalf("run %d recorded: %+v %v, want to %s", seq, rec, err, dest)
		}
		if seq == 1 && !strings.Contains(rec.Cmdline, " --port=5202 ") {
			t.Fatalf("run 1 dialed %q, want c's port 5202", rec.Cmdline)
		}
	}
}

// The grid and /metrics see a rotating task's pairs: its source with
// each of its destinations, scheduled (unmeasured until a run), and the
// hosts of its mesh group are all of them.
func TestRotatingTaskPairsOnTheGridAndMetrics(t *testing.T) {
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, false, nil)
	defer d.CloseQueue()
	defer d.Store().Close()
	tk := loopTask("tput", "a", "b", 5201, 1, time.Minute, 30*time.Second, 0)
	tk.ID, tk.Group = schedule.DefineID("test", "tput", "a", "slot 0"), "sampled"
	tk.Dests = []schedule.Destination{{Host: "b", Addr: tk.DestAddr}, {Host: "c", At: 20 * time.Second}, {Host: "d", At: 40 * time.Second}}
	if _, err := d.Schedule().PutTask(context.Background(), tk, time.Now()); err != nil {
		t.Fatal(err)
	}
	colours := map[string]float64{}
	for _, m := range promtest.Scrape(t, d.Mux())["wireperf_mesh_pairs"].GetMetric() {
		colours[promtest.Label(m, "colour")] = m.GetGauge().GetValue()
	}
	if colours["unmeasured"] != 3 {
		t.Errorf("pairs by colour %v, want a→b, a→c and a→d unmeasured", colours)
	}
	groups := daemon.HostGroups([]string{"a", "b", "c", "d"}, []*schedule.Task{tk})
	if fmt.Sprint(groups) != "[{sampled [a b c d]}]" {
		t.Errorf("groups %v, want every destination in the task's group", groups)
	}
	page := string(get(t, d, "/grid"))
	for _, h := range []string{"a", "b", "c", "d"} {
		if !strings.Contains(page, ">"+h+"<") {
			t.Errorf("host %s not on the grid", h)
		}
	}
}

// The API shows a rotating task's destinations and takes them back: a
// task read from its JSON is the task, and a bad offset is refused in
// one line naming it.
func TestRotatingTaskInTheAPI(t *testing.T) {
	tk := loopTask("tput", "a", "b", 5201, 1, time.Minute, 30*time.Second, 0)
	tk.DestAddr = "b"
	tk.Dests = []schedule.Destination{{Host: "b", Addr: "b"}, {Host: "c", Addr: "10.0.0.3:5202", At: 20 * time.Second}}
	b, err := json.Marshal(daemon.TaskToJSON(tk))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"dests":[{"host":"b","addr":"b"},{"host":"c","addr":"10.0.0.3:5202","at":"20s"}]`) {
		t.Fatalf("the task's JSON lacks its destinations: %s", b)
	}
	var j daemon.TaskJSON
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	back, err := j.Task()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Dests, tk.Dests) || back.Dest != "b" {
		t.Fatalf("read back: dest %q, dests %+v; want %+v", back.Dest, back.Dests, tk.Dests)
	}
	// A destination's address is data, checked as dest_addr is: no flag
	// or file can reach the test's command line through it.
	j.Dests[1].Addr = "--db=/etc/passwd"
	if bad, err := j.Task(); err == nil {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "dests[1]: addr") {
			t.Fatalf("a flag as a destination's address: %v", err)
		}
	}
	j.Dests[1].Addr = "10.0.0.3:5202"
	j.Dests[1].At = "soon"
	if _, err := j.Task(); err == nil || err.Error() != `dests[1].at: "soon": want a duration such as 20s` {
		t.Fatalf("a bad offset: %v", err)
	}
}
