package lab

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// The status a person reads: the router's state, the path, one row of
// counters per direction with lost summed as the footnote says, a line
// when the router fell behind, the access links of a many-senders lab,
// and the TUN devices (or why their counters are missing).
func TestStateWriteText(t *testing.T) {
	st := &State{
		Info: Info{Name: "wan", Addrs: map[string]string{"a": "10.77.1.1", "b": "10.77.2.2", "a1": "10.77.3.1"},
			AtoB: "delay=10ms,rate=50m,queue=6250k", BtoA: "delay=10ms", MTU: 1500, RandStart: 7, RouterPID: 42,
			TCPBuffers: BuffersStock},
		Running: true, Since: time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC), Updated: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	}
	st.Router.AtoB = DirStats{Counters: impair.Counters{In: 100, Out: 90, DroppedLoss: 6, DroppedQueue: 2,
		ReleasedLate: 3, MaxLateUs: 2500, OutputLostUs: 1200}, WriteErrors: 1, TunIn: &LinkStats{TxDropped: 1, RxPackets: 100}}
	var b strings.Builder
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		// Since when the router counts, not when it last wrote the counters.
		"lab \"wan\": router running (pid 42); counting since 2026-03-01T11:00:00Z\n",
		"  a (10.77.1.1) ─ r ─ b (10.77.2.2), MTU 1500, rand-start 7\n",
		// The queue limit in a byte unit: 6250k is 6,250,000 bytes, 5.96 MiB.
		"  a→b: delay=10ms,rate=50m,queue=5.96 MBytes\n  b→a: delay=10ms\n",
		// Which TCP buffers the hosts have: the one host setting that
		// decides a long path's single stream.
		"  TCP buffers: stock Linux (tcp_rmem 4096 131072 6291456, tcp_wmem 4096 16384 4194304)\n",
		"lost = loss + queue + limit + write errors + oversize + TUN queue drops",
		"a→b: the router fell behind: 3 packets left more than 1 ms late (the worst 2.5 ms), and its output stood idle 1.2 ms",
		"imp-a: rx 100 packets (dropped 0), tx 0 packets (dropped 1: the router was behind)",
		"imp-b: counters not read (needs root)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// a→b's row: in 100, out 90, lost 6+2+1 write error+1 TUN drop = 10.
	var row []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "a→b" {
			row = f
		}
	}
	if len(row) != 14 || row[1] != "100" || row[2] != "90" || row[3] != "10" || row[13] != "1" {
		t.Errorf("a→b row %q, want in 100, out 90, lost 10, TUN drops 1", row)
	}
	if strings.Contains(out, "b→a: the router fell behind") || strings.Contains(out, "access links") {
		t.Errorf("status says more than happened:\n%s", out)
	}

	if strings.Contains(out, "12:00:00") || strings.Contains(out, "6250k") {
		t.Errorf("status shows the counters' write time or a queue without a unit:\n%s", out)
	}

	st.Running, st.Senders, st.Since = false, 1, time.Time{}
	st.Access = []AccessStats{{Sender: "a1", Link: LinkStats{RxPackets: 5, RxBytes: 500, TxPackets: 4, TxBytes: 400, TxDropped: 2}}}
	b.Reset()
	if err := st.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	for _, want := range []string{"lab \"wan\": router NOT running (take the lab down and up again)\n", "a1…a1 ─ s ─ r ─ b (10.77.2.2)", "access links (counted on s):", "a1 (10.77.3.1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("many-senders status lacks %q:\n%s", want, out)
		}
	}
}

// With no lab up, the list says so rather than printing nothing; a lab
// whose router runs shows its path, one whose router does not says that.
func TestWriteListPaths(t *testing.T) {
	var b strings.Builder
	if err := writeList(&b, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "no labs are up\n"; got != want {
		t.Errorf("empty list %q, want %q", got, want)
	}
	status := func(name string) (*State, error) {
		return &State{Info: Info{Addrs: map[string]string{"a": "10.77.1.1", "b": "10.77.2.2"}, AtoB: "queue=1M"}, Running: name == "up"}, nil
	}
	b.Reset()
	if err := writeList(&b, []string{"down", "up"}, status); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "down\trouter not running\nup\ta 10.77.1.1 ─ r ─ b 10.77.2.2; a→b queue=1.00 MBytes\n"; got != want {
		t.Errorf("list %q, want %q", got, want)
	}
}

func TestStatePath(t *testing.T) {
	st := &State{Info: Info{Addrs: map[string]string{"a": "10.77.1.1", "b": "10.77.2.2"}, AtoB: "delay=5ms"}}
	if got, want := st.Path(), "a 10.77.1.1 ─ r ─ b 10.77.2.2; a→b delay=5ms"; got != want {
		t.Errorf("path %q, want %q", got, want)
	}
	st.Senders = 3
	if got, want := st.Path(), "a1…a3 ─ s ─ r ─ b 10.77.2.2; s→b delay=5ms"; got != want {
		t.Errorf("senders' path %q, want %q", got, want)
	}
}

// ExitStatus passes on a command's own status, and a signal's as a
// shell does; any other error is not an exit status.
func TestExitStatus(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("needs sh: %v", err)
	}
	for _, c := range []struct {
		script string
		want   int
	}{{"exit 3", 3}, {"kill -TERM $$", 128 + 15}} {
		err := exec.Command(sh, "-c", c.script).Run()
		if code, ok := ExitStatus(err); !ok || code != c.want {
			t.Errorf("%q: status %d, %v; want %d", c.script, code, ok, c.want)
		}
	}
	if _, ok := ExitStatus(exec.Command("/no/such/command").Run()); ok {
		t.Error("a command that never started has an exit status")
	}
	if _, ok := ExitStatus(nil); ok {
		t.Error("success has an exit status")
	}
}

// What `lab up` prints names the queue in the unit `lab status` and
// `lab list` use (a byte unit, as transfers), never the raw byte count
// or the flag's form.
func TestNextStepsQueueUnit(t *testing.T) {
	for _, i := range []*Info{
		{Name: "w", Addrs: map[string]string{"a": "10.77.1.1", "b": "10.77.2.2"}, AtoB: "rate=622m,queue=3887500", BtoA: "rate=1g,queue=6250000"},
		{Name: "m", Senders: 2, Addrs: map[string]string{"b": "10.77.2.2"}, AtoB: "rate=622m,queue=3887500", BtoA: "rate=1g,queue=6250000"},
	} {
		out := i.NextSteps("")
		for _, want := range []string{"queue=3.71 MBytes", "queue=5.96 MBytes"} {
			if !strings.Contains(out, want) {
				t.Errorf("lab %s: %q not in\n%s", i.Name, want, out)
			}
		}
		if strings.Contains(out, "3887500") || strings.Contains(out, "6250k") || strings.Contains(out, "6250000") {
			t.Errorf("lab %s: a queue in bytes or in the flag's form:\n%s", i.Name, out)
		}
	}
}
