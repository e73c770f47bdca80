// Package udpmonrun runs a UDPmon sweep (udpmon.Plan): each point a
// native UDP test against the server, a busy server asked again, a
// failure that every point would meet ending the sweep.
package udpmonrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// A point the server refuses as busy is asked again busyRetries times,
// busyWait apart, before it counts as failed.
const (
	busyRetries = 3
	busyWait    = 500 * time.Millisecond
)

// ErrRecurs marks a point's error that every later point would meet too,
// such as the server refusing the test for a reason other than being
// busy. Config.Run wraps such errors in it; the sweep stops at the first,
// as it does when the connection is refused.
var ErrRecurs = errors.New("every point would fail the same way")

// recurs reports whether err would fail every later point as well.
func recurs(err error) bool {
	return errors.Is(err, ErrRecurs) || errors.Is(err, syscall.ECONNREFUSED)
}

// Config is a sweep.
type Config struct {
	// Server names the server in the report ("host port 5201").
	Server string
	Logger *slog.Logger

	// Plan is the sweep's grid and the tests its points share.
	udpmon.Plan
	// OnPoint, if set, is called after each point with the progress so
	// far and an estimate of the time left.
	OnPoint func(p *udpmon.Point, done, total int, eta time.Duration)
	// Client reaches the server: each point is a test of its own over it,
	// with the point's spec.
	Client session.ClientConfig
	// Run, when set, runs a point instead of session.RunClient over
	// Client: the tests' way to sweep without a server.
	Run func(ctx context.Context, s spec.Spec) (*result.Result, error)
	// Router, when set, reads a lab router's counters once they cover
	// end: the sweep reads them before the first point and after each, and
	// puts the router's drops in the point's loss attribution beside the
	// receiving socket's. Run through a lab, the command sets it from
	// lab.WatchRouter.
	Router func(end time.Time) (udpmon.RouterCounts, error)
}

// runPoint is a point's test against the server. A refusal other than
// "busy" (a limit, a setting the server cannot apply) would meet every
// point, so it ends the sweep (ErrRecurs).
func (c Config) runPoint(ctx context.Context, s spec.Spec) (*result.Result, error) {
	cc := c.Client
	cc.Spec = s
	res, err := session.RunClient(ctx, cc)
	if errors.Is(err, control.ErrRefused) && !strings.Contains(err.Error(), "busy") {
		err = fmt.Errorf("%w (%w)", err, ErrRecurs)
	}
	return res, err
}

// Run runs the sweep: every spacing for each size, in the order given. A
// point that fails (a timeout, a busy server) is recorded with its error
// and the sweep goes on; cancelling ctx ends it after the running point,
// which then counts as failed. A failure that would recur at every point
// (the connection refused, the test refused: see ErrRecurs) ends the
// sweep at once, without recording that point, and is returned. Otherwise
// the error is ctx's, or nil.
func Run(ctx context.Context, cfg Config) (*udpmon.Sweep, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	run := cfg.Run
	if run == nil {
		run = cfg.runPoint
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	sw := &udpmon.Sweep{Server: cfg.Server, StartedAt: time.Now(), Reverse: cfg.Reverse, Count: cfg.PointCount()}
	total := len(cfg.Sizes) * len(cfg.Spacings)
	var routerBefore *udpmon.RouterCounts
	if cfg.Router != nil {
		if c, err := cfg.Router(time.Now()); err == nil {
			routerBefore = &c
		} else {
			logger.Info("udpmon: the lab router's counters cannot be read; loss is attributed without them", "err", err)
		}
	}
	for _, size := range cfg.Sizes {
		for _, spacing := range cfg.Spacings {
			if ctx.Err() != nil {
				sw.Seconds = time.Since(sw.StartedAt).Seconds()
				return sw, ctx.Err()
			}
			start := time.Now()
			var res *result.Result
			var err error
			for try := 0; ; try++ {
				pctx, cancel := context.WithTimeout(ctx, cfg.PointBound(spacing))
				res, err = run(pctx, cfg.Spec(size, spacing))
				if err == nil && pctx.Err() != nil {
					err = fmt.Errorf("timed out after %v", cfg.PointBound(spacing))
				}
				cancel()
				// A server still finishing the previous point (or busy with
				// others) refuses before anything ran: wait and ask again.
				if res != nil || err == nil || !strings.Contains(err.Error(), "busy") || try == busyRetries || ctx.Err() != nil {
					break
				}
				logger.Info("udpmon: server busy, retrying the point", "size", size, "spacing", spacing)
				select {
				case <-time.After(busyWait):
				case <-ctx.Done():
				}
			}
			if err != nil && recurs(err) {
				sw.Seconds = time.Since(sw.StartedAt).Seconds()
				return sw, err
			}
			var routerDrops *uint64
			if routerBefore != nil {
				if c, err := cfg.Router(time.Now()); err == nil {
					d := udpmon.DataDrops(*routerBefore, c)
					routerDrops, routerBefore = &d, &c
				} else {
					routerBefore = nil
				}
			}
			p := udpmon.PointOfAt(res, cfg.Reverse, routerDrops)
			p.Size, p.Spacing, p.Count = size, spacing, cfg.PointCount()
			p.Seconds = time.Since(start).Seconds()
			if err != nil {
				p.Error = err.Error()
				sw.Failed++
				// The point carries its error into every report (the
				// table's row and footer, CSV, JSON): on stderr as well
				// it would be said three times.
				logger.Info("udpmon point failed", "size", size, "spacing", spacing, "err", err)
			}
			sw.Points = append(sw.Points, p)
			if cfg.OnPoint != nil {
				done := len(sw.Points)
				eta := time.Duration(float64(time.Since(sw.StartedAt)) / float64(done) * float64(total-done))
				cfg.OnPoint(&sw.Points[done-1], done, total, eta)
			}
		}
	}
	sw.Seconds = time.Since(sw.StartedAt).Seconds()
	return sw, nil
}
