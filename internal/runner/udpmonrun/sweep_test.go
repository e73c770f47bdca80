package udpmonrun_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/runner/udpmonrun"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/udpmonfake"
	"github.com/wireperf/wireperf/internal/udpmon"
)

func TestSweepSurvivesFailedPoints(t *testing.T) {
	calls := 0
	cfg := udpmonrun.Config{
		Server: "h port 1", Plan: udpmon.Plan{Sizes: []int{512, 1472}, Spacings: []time.Duration{0, 10 * time.Microsecond}, Count: 100},
		Run: func(ctx context.Context, s spec.Spec) (*result.Result, error) {
			calls++
			switch calls {
			case 2: // a point that fails
				return nil, errors.New("connecting to h:1: i/o timeout")
			case 3: // a busy server, asked again
				return nil, errors.New("server refused the test: server is busy: 4 tests running")
			}
			return udpmonfake.Result(s, 100, max(s.Spacing, time.Microsecond), 0, 0), nil
		},
	}
	var progress []int
	cfg.OnPoint = func(p *udpmon.Point, done, total int, eta time.Duration) { progress = append(progress, done*10+total) }
	var warnings bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&warnings, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sw, err := udpmonrun.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The failed point's error is in the point, which every report shows:
	// not said again on stderr at the default level.
	if warnings.Len() > 0 {
		t.Errorf("warnings logged: %s", warnings.String())
	}
	if len(sw.Points) != 4 || sw.Failed != 1 || sw.Points[1].Error == "" || sw.Points[2].Error != "" || sw.Points[3].Size != 1472 || calls != 5 {
		t.Errorf("sweep %+v", sw)
	}
	if len(progress) != 4 || progress[3] != 44 {
		t.Errorf("progress %v", progress)
	}
}

// A failure that every point would meet ends the sweep at the first:
// a refused connection, or an error the runner marks as recurring.
func TestSweepStopsAtARecurringFailure(t *testing.T) {
	for _, recurring := range []error{
		fmt.Errorf("connecting to h:1: %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}),
		fmt.Errorf("%w: server refused the test: 200 streams, at most 128", udpmonrun.ErrRecurs),
	} {
		calls, onPoint := 0, 0
		cfg := udpmonrun.Config{
			Server: "h port 1", Plan: udpmon.Plan{Sizes: []int{512, 1472}, Spacings: []time.Duration{0, 10 * time.Microsecond}, Count: 100},
			Run: func(ctx context.Context, s spec.Spec) (*result.Result, error) {
				calls++
				if calls == 2 {
					return nil, recurring
				}
				return udpmonfake.Result(s, 100, max(s.Spacing, time.Microsecond), 0, 0), nil
			},
			OnPoint: func(*udpmon.Point, int, int, time.Duration) { onPoint++ },
		}
		sw, err := udpmonrun.Run(context.Background(), cfg)
		if !errors.Is(err, recurring) {
			t.Errorf("Run = %v; want %v", err, recurring)
		}
		if calls != 2 || onPoint != 1 || sw == nil || len(sw.Points) != 1 || sw.Failed != 0 {
			t.Errorf("%v: %d calls, %d points reported, sweep %+v; want the sweep to stop at the second point", recurring, calls, onPoint, sw)
		}
	}
}

// TestSweepCountsTheRoutersDrops: run through a lab, each point's loss is
// attributed with the router's drops over that point alone, in the
// direction that carried it, beside the receiving socket's own count;
// host-wide RcvbufErrors do not crowd them out.
func TestSweepCountsTheRoutersDrops(t *testing.T) {
	// The router's cumulative counts after each reading: the data went
	// b→a in the second point (a reverse-like point), a→b otherwise.
	readings := []udpmon.RouterCounts{
		{InAtoB: 100, LostAtoB: 5, InBtoA: 50, LostBtoA: 1},
		{InAtoB: 1100, LostAtoB: 305, InBtoA: 60, LostBtoA: 1},    // point 1: a→b, 300 dropped
		{InAtoB: 1110, LostAtoB: 305, InBtoA: 2060, LostBtoA: 41}, // point 2: b→a, 40 dropped
	}
	read := 0
	socket := []uint64{100, 0}
	point := 0
	sw, err := udpmonrun.Run(context.Background(), udpmonrun.Config{
		Plan: udpmon.Plan{Sizes: []int{1000}, Spacings: []time.Duration{0, 10 * time.Microsecond}, Count: 1000}, Logger: slog.New(slog.DiscardHandler),
		Run: func(_ context.Context, s spec.Spec) (*result.Result, error) {
			res := udpmonfake.Result(s, 1000, 10*time.Microsecond, 400-360*int64(point), 9999)
			res.Remote.Streams[0].UDP.SocketDrops = &socket[point]
			point++
			return res, nil
		},
		Router: func(time.Time) (udpmon.RouterCounts, error) {
			c := readings[read]
			read++
			return c, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ router, socket, unexplained int64 }{{300, 100, 0}, {40, 0, 0}}
	for i, p := range sw.Points {
		a := p.LossAttribution
		if a == nil || a.Router == nil || a.ReceiverSocket == nil {
			t.Fatalf("point %d: %+v", i, a)
		}
		if *a.Router != want[i].router || *a.ReceiverSocket != want[i].socket || a.Network != want[i].unexplained {
			t.Errorf("point %d: router %d, socket %d, unexplained %d; want %+v (%s)", i, *a.Router, *a.ReceiverSocket, a.Network, want[i], a.Verdict)
		}
		if strings.Contains(a.Verdict, "RcvbufErrors") {
			t.Errorf("point %d: the host-wide count in the verdict: %s", i, a.Verdict)
		}
	}
}
