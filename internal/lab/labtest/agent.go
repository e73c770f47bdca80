package labtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/server"
)

const (
	// agentEnv holds "ADDR|KEYFILE" for a helper's server; with a key
	// file it is also an agent (wireperf server --agent).
	agentEnv = "WIREPERF_LABTEST_AGENT"
	// agentListening starts the line such a helper prints with its port.
	agentListening = "LABTEST-AGENT "
)

// MaybeServeAgent turns the test binary into a wireperf server, an agent
// when given a key file, when it runs as the helper process that
// StartAgent starts, and does not return then. Call it first in TestMain.
func MaybeServeAgent() {
	v := os.Getenv(agentEnv)
	if v == "" {
		return
	}
	bind, keyFile, _ := strings.Cut(v, "|")
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// A short grace: stopping this helper is how a test kills a receiver
	// mid-test.
	cfg := server.Config{Bind: bind, Limits: server.DefaultLimits(), ShutdownGrace: 10 * time.Millisecond, Logger: logger}
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
	fmt.Printf("%s%d\n", agentListening, srv.Addr().Port)
	// Bounded, as MaybeServe's.
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

// StartAgent starts a wireperf server in host h, bound to h.Addr, that is
// also an agent for the controllers of keyFile ("" for a plain server),
// and returns the process and its port. Stop kills it at once, with its
// tests. The test binary's TestMain must call MaybeServeAgent.
func StartAgent(t testing.TB, h Host, keyFile string) (*Proc, int) {
	t.Helper()
	p := start(t, h, []string{agentEnv + "=" + h.Addr.String() + "|" + keyFile}, agentListening, []string{"-test.run=^$"})
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
