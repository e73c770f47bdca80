//go:build linux

// Package rrtest helps the impairment-lab tests of internal/rr and
// internal/udpmon: it runs a wireperf server as a process of its own
// inside a lab host. (In-process, the server's UDP port mux would open
// each stream's socket from a thread outside the host's namespace, and
// /proc/net/snmp would describe the wrong namespace; see
// internal/lab/accept_wireperf_helpers_test.go.)
package rrtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/server"
)

const serverEnv = "WIREPERF_RRTEST_SERVER"

// MaybeServe turns the test binary into a wireperf server when it runs as
// the helper process that StartServer starts, and does not return then.
// Call it first in TestMain.
func MaybeServe() {
	bind := os.Getenv(serverEnv)
	if bind == "" {
		return
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := server.New(server.Config{Bind: bind, Limits: server.DefaultLimits(), ShutdownGrace: time.Second, Logger: logger})
	if err := srv.Listen(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("RRTEST-SERVER %d\n", srv.Addr().Port)
	// The parent kills this process when its test ends, and the lab's
	// teardown kills what is left in the namespace; this is the last
	// resort.
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

type watcher struct {
	mu   sync.Mutex
	all  bytes.Buffer
	line []byte
	port chan int
}

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	for _, c := range p {
		if c != '\n' {
			w.line = append(w.line, c)
			continue
		}
		if s, ok := strings.CutPrefix(string(w.line), "RRTEST-SERVER "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				select {
				case w.port <- n:
				default:
				}
			}
		}
		w.line = w.line[:0]
	}
	return len(p), nil
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// StartServer starts a wireperf server in host h, bound to h's address,
// and returns its port. It serves tests until the test ends.
func StartServer(t testing.TB, h *lab.Host) int {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := h.Command(ctx, bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+h.Addr.String())
	out := &watcher{port: make(chan int, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 3 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("wireperf server in %s said:\n%s", h.Name, out)
		}
	})
	select {
	case port := <-out.port:
		return port
	case err := <-exited:
		exited <- err
		t.Fatalf("wireperf server in %s exited before listening (%v):\n%s", h.Name, err, out)
	case <-time.After(20 * time.Second):
		t.Fatalf("wireperf server in %s did not start listening within 20 s:\n%s", h.Name, out)
	}
	return 0
}

// Quiet is a logger for clients in tests.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
