// Package labtest runs the test binary again as a helper process inside a
// host of an impairment lab (internal/lab): a wireperf server there
// (MaybeServe and StartServer), or a helper of a test's own (Start).
//
// Why a process of its own: lab.Host.Do puts only the calling OS thread
// in the host's namespace. wireperf's server opens sockets later, from
// goroutines on whatever thread the runtime picks (its UDP port mux
// opens each stream's connected socket so), and those sockets land in
// the root namespace, where binding the host's address fails. Reading
// /proc/net/snmp or /proc/sys has the same problem: it shows the
// namespace of the process's main thread. A whole process inside the
// host has neither problem.
//
// labtest does not import internal/lab, so that lab's own tests (package
// lab) can use it too: a Host is filled in from a *lab.Host.
package labtest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/server"
)

// Host is a lab host as labtest needs it. From a *lab.Host h:
//
//	labtest.Host{Name: h.Name, Addr: h.Addr, Command: h.Command}
type Host struct {
	Name    string     // for messages
	Addr    netip.Addr // what StartServer's server binds
	Command func(ctx context.Context, name string, args ...string) *exec.Cmd
}

// Quiet is a logger for clients in tests.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Proc is a helper process that Start started.
type Proc struct {
	out    *output
	cancel context.CancelFunc
	done   chan struct{} // closed when the process has exited
	err    error         // its exit, set before done is closed
}

// Start runs the test binary again inside h with the test flags args
// (which test runs as the helper, say) and env added to its environment,
// and returns at once. The process is stopped when the test ends (see
// Stop), if it has not exited by then.
func Start(t testing.TB, h Host, env []string, args ...string) *Proc {
	t.Helper()
	return start(t, h, env, "", args)
}

// start is Start, and hands the rest of the first line of the helper's
// output that starts with ready (if not "") to p.out.ready.
func start(t testing.TB, h Host, env []string, ready string, args []string) *Proc {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := h.Command(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &Proc{out: &output{prefix: ready, ready: make(chan string, 1)}, cancel: cancel, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// Stopping asks first, as a user's Ctrl-C would: the helpers end
	// gracefully on SIGTERM. One that does not is killed 3 s later.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	return p
}

// Stop stops the process, if it still runs, and waits until it has
// exited: SIGTERM, then SIGKILL after 3 s. It may be called again.
func (p *Proc) Stop() {
	p.cancel()
	<-p.done
}

// Wait waits at most d for the process to exit on its own; exited is
// false if it did not, and err is its exit (nil for status 0).
func (p *Proc) Wait(d time.Duration) (exited bool, err error) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-p.done:
	case <-tm.C:
		// An exit at the deadline still counts.
		select {
		case <-p.done:
		default:
			return false, nil
		}
	}
	return true, p.err
}

// Output is everything the process has printed, on either stream.
func (p *Proc) Output() string { return p.out.String() }

// output is an io.Writer that collects a process's output and hands the
// rest of the first line that starts with prefix to ready.
type output struct {
	prefix string
	ready  chan string

	mu   sync.Mutex
	all  bytes.Buffer
	line []byte
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all.Write(p)
	for _, c := range p {
		if c != '\n' {
			o.line = append(o.line, c)
			continue
		}
		if s, ok := strings.CutPrefix(string(o.line), o.prefix); o.prefix != "" && ok {
			select {
			case o.ready <- strings.TrimSpace(s):
			default:
			}
		}
		o.line = o.line[:0]
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String()
}

const (
	// serverEnv holds the address that a helper's server binds.
	serverEnv = "WIREPERF_LABTEST_SERVER"
	// listening starts the line a helper's server prints, with its port,
	// once it listens.
	listening = "LABTEST-SERVER "
)

// MaybeServe turns the test binary into a wireperf server when it runs as
// the helper process that StartServer (or StartAgent) starts, and does not
// return then. Call it first in TestMain.
func MaybeServe() {
	if bind := os.Getenv(serverEnv); bind != "" {
		serve(bind, "", time.Second, listening)
	}
	MaybeServeAgent()
}

// serve runs a server bound to bind, an agent for the keys of keyFile
// when given, prints ready and its port once it listens, and exits.
func serve(bind, keyFile string, grace time.Duration, ready string) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := server.Config{Bind: bind, Limits: server.DefaultLimits(), ShutdownGrace: grace, Logger: logger}
	if keyFile != "" {
		keys, err := auth.LoadKeys(keyFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cfg.Agent = &agent.Agent{Keys: keys, Logger: logger}
	}
	srv := server.New(cfg)
	if err := srv.Listen(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s%d\n", ready, srv.Addr().Port)
	// Bounded: the parent stops this process when its test ends, and
	// the lab's teardown kills what is left in the namespace; this is
	// the last resort.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StartServer starts a wireperf server in host h, bound to h.Addr, and
// returns its port. It serves tests until the test ends; then it is
// stopped, and if the test failed, what it printed is logged. The test
// binary's TestMain must call MaybeServe.
func StartServer(t testing.TB, h Host) int {
	t.Helper()
	_, port := startServing(t, h, serverEnv+"="+h.Addr.String(), listening)
	return port
}

// startServing starts a helper whose server prints ready and its port,
// with env added to its environment, and waits for that line.
func startServing(t testing.TB, h Host, env, ready string) (*Proc, int) {
	t.Helper()
	p := start(t, h, []string{env}, ready, []string{"-test.run=^$"})
	// Registered after start's own Stop, so it runs first.
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("wireperf server in %s said:\n%s", h.Name, p.Output())
		}
	})
	select {
	case s := <-p.out.ready:
		port, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("wireperf server in %s: bad port %q:\n%s", h.Name, s, p.Output())
		}
		return p, port
	case <-p.done:
		t.Fatalf("wireperf server in %s exited before listening (%v):\n%s", h.Name, p.err, p.Output())
	case <-time.After(20 * time.Second):
		t.Fatalf("wireperf server in %s did not start listening within 20 s:\n%s", h.Name, p.Output())
	}
	return nil, 0
}

// BestOf runs a timing-sensitive measurement up to n times and stops at
// the first that passes: on a machine shared with other work (CI runs
// other packages' tests beside these), one starved run should not fail the
// suite, while a real regression fails every attempt. Every attempt is
// logged.
func BestOf[T any](t testing.TB, n int, measure func(attempt int) (T, bool)) (T, bool) {
	t.Helper()
	var v T
	var ok bool
	for i := 1; i <= n; i++ {
		if v, ok = measure(i); ok {
			return v, true
		}
		if i < n {
			t.Logf("attempt %d missed the target (is the machine busy?); measuring again", i)
		}
	}
	return v, false
}
