// Package loopserver runs a wireperf server on 127.0.0.1 for a test, so
// that every test of a client, a runner or a command starts and stops its
// server the same way. It is apart from internal/testutil/loopback
// because it imports internal/server: the data plane's tests, which use
// loopback, are below the server. Only tests import it.
package loopserver

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/server"
)

// Start listens on an ephemeral port of 127.0.0.1 and serves until the
// test ends: server.DefaultLimits, a discarded log and a one-second
// shutdown grace, each changed by configure first. The test's cleanup
// stops the server, waits until Serve returns and fails the test on its
// error. The port is Start(t).Addr().Port.
func Start(t testing.TB, configure ...func(*server.Config)) *server.Server {
	t.Helper()
	cfg := server.Config{
		Bind:          "127.0.0.1",
		Limits:        server.DefaultLimits(),
		ShutdownGrace: time.Second,
		Logger:        slog.New(slog.DiscardHandler),
	}
	for _, c := range configure {
		c(&cfg)
	}
	srv := server.New(cfg)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("loopback server: %v", err)
		}
	})
	return srv
}
