package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// NeedRoot says why this process cannot manage a persistent lab (what is
// the lab command, "up" or "down"), or nil.
func NeedRoot(what string) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("wireperf lab %s: %w", what, ErrNeedsLinux)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("wireperf lab %s needs root: the lab creates network namespaces, veth pairs and TUN devices (run it with sudo)", what)
	}
	return nil
}

// ExitStatus is the exit status of the command Exec ran when err says it
// exited: its code, or 128 and the signal's number when a signal ended
// it, as a shell reports it. ok is false for any other error.
func ExitStatus(err error) (code int, ok bool) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, false
	}
	code = ee.ExitCode()
	if ws, isWS := ee.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return code, true
}

// Path is a running lab's hosts and its settings toward b, on one line
// (`wireperf lab list`).
func (s *State) Path() string {
	if s.Senders > 0 {
		return fmt.Sprintf("a1…a%d ─ s ─ r ─ b %s; s→b %s", s.Senders, s.Addrs["b"], settingsText(s.AtoB))
	}
	return fmt.Sprintf("a %s ─ r ─ b %s; a→b %s", s.Addrs["a"], s.Addrs["b"], settingsText(s.AtoB))
}

// settingsText renders a direction's stored settings (in the form the
// flags take) for people, with sizes in a byte unit; text that does not
// parse is printed as it is.
func settingsText(settings string) string {
	c, err := impair.ParseConfig(settings)
	if err != nil {
		return settings
	}
	return c.Text()
}

// WriteList prints the labs that are up, one a line: the name, and the
// path when its router runs (`wireperf lab list`).
func WriteList(w io.Writer) error {
	names, err := List()
	if err != nil {
		return err
	}
	return writeList(w, names, Status)
}

// writeList prints the labs named, each with its path from status when
// its router runs, or that none is up.
func writeList(w io.Writer, names []string, status func(string) (*State, error)) error {
	if len(names) == 0 {
		_, err := fmt.Fprintln(w, "no labs are up")
		return err
	}
	for _, n := range names {
		state := "router not running"
		if st, err := status(n); err == nil && st.Running {
			state = st.Path()
		}
		if _, err := fmt.Fprintf(w, "%s\t%s\n", n, state); err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints the lab's state for people (`wireperf lab status`):
// its settings, what the router did in each direction, and the counters
// of its links.
func (s *State) WriteText(w io.Writer) error {
	state := "NOT running (take the lab down and up again)"
	if s.Running {
		state = fmt.Sprintf("running (pid %d)", s.RouterPID)
	}
	// Updated is when the router last wrote its counters, about the time
	// of this call; what matters is since when they count.
	if s.Since.IsZero() {
		fmt.Fprintf(w, "lab %q: router %s\n", s.Name, state)
	} else {
		fmt.Fprintf(w, "lab %q: router %s; counting since %s\n", s.Name, state, s.Since.Format(time.RFC3339))
	}
	if s.Senders > 0 {
		fmt.Fprintf(w, "  a1…a%d ─ s ─ r ─ b (%s), MTU %d, rand-start %d\n", s.Senders, s.Addrs["b"], s.MTU, s.RandStart)
	} else {
		fmt.Fprintf(w, "  a (%s) ─ r ─ b (%s), MTU %d, rand-start %d\n", s.Addrs["a"], s.Addrs["b"], s.MTU, s.RandStart)
	}
	fmt.Fprintf(w, "  a→b: %s\n  b→a: %s\n", settingsText(s.AtoB), settingsText(s.BtoA))
	fmt.Fprintf(w, "  TCP buffers: %s\n\n", s.TCPBuffers.Text())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tin\tout\tlost\tloss\tqueue\tlimit\tduplicated\treordered\theld\tqueued\twrite errors\toversize\tTUN queue drops\t")
	dir := func(name string, d DirStats) {
		tun := "-"
		if d.TunIn != nil {
			tun = strconv.FormatUint(d.TunIn.TxDropped, 10)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name,
			d.Counters.In, d.Out, d.Lost(), d.DroppedLoss, d.DroppedQueue, d.DroppedLimit,
			d.Duplicated, d.Reordered, d.Held, d.QueuedPackets, d.WriteErrors, d.Oversize, tun)
	}
	dir("a→b", s.Router.AtoB)
	dir("b→a", s.Router.BtoA)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n  lost = loss + queue + limit + write errors + oversize + TUN queue drops")
	for _, d := range []struct {
		name string
		s    DirStats
	}{{"a→b", s.Router.AtoB}, {"b→a", s.Router.BtoA}} {
		if d.s.ReleasedLate > 0 || d.s.OutputLostUs > 0 {
			fmt.Fprintf(w, "  %s: the router fell behind: %d packets left more than 1 ms late (the worst %.1f ms), "+
				"and its output stood idle %.1f ms while packets were due: the path delivered later, and less, than its settings say\n",
				d.name, d.s.ReleasedLate, float64(d.s.MaxLateUs)/1e3, float64(d.s.OutputLostUs)/1e3)
		}
	}
	s.writeAccessStats(w)
	// The router's TUN devices: imp-a carries a→b packets into the router
	// (and b→a packets out), imp-b the other way.
	for _, d := range []struct {
		dev string
		s   *LinkStats
	}{{"imp-a", s.Router.AtoB.TunIn}, {"imp-b", s.Router.BtoA.TunIn}} {
		if d.s == nil {
			fmt.Fprintf(w, "  %s: counters not read (needs root)\n", d.dev)
			continue
		}
		fmt.Fprintf(w, "  %s: rx %d packets (dropped %d), tx %d packets (dropped %d: the router was behind)\n",
			d.dev, d.s.RxPackets, d.s.RxDropped, d.s.TxPackets, d.s.TxDropped)
	}
	return nil
}

// writeAccessStats prints a many-senders lab's access links, as s counts
// them: toward b is what the sender sent.
func (s *State) writeAccessStats(w io.Writer) {
	if len(s.Access) == 0 {
		return
	}
	fmt.Fprintln(w, "\n  access links (counted on s):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tsender\ttoward b pkts\tbytes\tdropped\ttoward sender pkts\tbytes\tdropped\t")
	for _, a := range s.Access {
		l := a.Link
		fmt.Fprintf(tw, "\t%s (%s)\t%d\t%d\t%d\t%d\t%d\t%d\t\n", a.Sender, s.Addrs[a.Sender],
			l.RxPackets, l.RxBytes, l.RxDropped, l.TxPackets, l.TxBytes, l.TxDropped)
	}
	_ = tw.Flush()
}
