package serverflags

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// --server-max-duration, iperf3's name, sets the server's --max-duration:
// on loopback a client asking for a longer test is refused with the
// limit, and one under it runs.
func TestServerMaxDuration(t *testing.T) {
	f := parse(t, "--server-max-duration", "1", "-B", "127.0.0.1", "-p", "0", "-i", "0")
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if f.Config.Limits.MaxDuration != time.Second {
		t.Fatalf("--server-max-duration 1: limit %v, want 1s", f.Config.Limits.MaxDuration)
	}
	srv := f.Server(&lockedBuffer{}, slog.New(slog.DiscardHandler))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		<-served
	}()
	run := func(d time.Duration) error {
		s := spec.Default()
		s.Duration, s.Interval = d, 0
		_, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: "127.0.0.1", Port: srv.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s,
		}})
		return err
	}
	if err := run(3 * time.Second); !errors.Is(err, control.ErrRefused) || !strings.Contains(err.Error(), "its limit is 1s") {
		t.Errorf("a 3 s test: err %v, want a refusal naming the 1 s limit", err)
	}
	if err := run(300 * time.Millisecond); err != nil {
		t.Errorf("a 300 ms test under the limit: %v", err)
	}
}
