package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// A campaign is run by one sweep at a time: two at once would both run
// the runs still missing, and each run twice. A sweep holds its campaign
// in the schedule's reservations (taskstore: the table the daemon reserves
// hosts in, where PostgreSQL itself refuses an overlapping hold) for holdLease,
// renewed while it runs, so that a sweep that crashed frees its campaign
// within holdLease.
const holdLease = 2 * time.Minute

var holds atomic.Int64

// resource is what a sweep of the campaign name reserves.
func resource(name string) string { return "campaign:" + name }

// Hold takes the campaign name for this sweep, or fails naming the sweep
// that holds it. release ends the hold.
func Hold(ctx context.Context, a *archive.Store, name string, log *slog.Logger) (release func(), err error) {
	st := taskstore.New(a)
	host, _ := os.Hostname()
	start := time.Now()
	// The number tells apart two sweeps of one process (tests).
	owner := fmt.Sprintf("sweep on %s, pid %d, since %s, #%d", host, os.Getpid(), start.UTC().Format(time.RFC3339), holds.Add(1))
	take := func(now time.Time) error {
		return st.Reserve(ctx, []schedule.Reservation{{Resource: resource(name),
			From: start, To: now.Add(holdLease), RunID: owner, Class: schedule.Exclusive}})
	}
	if err := take(start); err != nil {
		var b *schedule.Busy
		if errors.As(err, &b) {
			return nil, fmt.Errorf("campaign %q is being run by another sweep (%s; held until %s unless renewed): let it finish, or stop it and resume",
				name, b.RunID, b.Until.Local().Format(time.TimeOnly))
		}
		return nil, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(holdLease / 4)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if err := take(now); err != nil {
					log.Warn("renewing the campaign's hold", "campaign", name, "err", err)
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		// With a context of its own: an interrupted sweep still frees it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := st.Release(rctx, owner, time.Now()); err != nil {
			log.Warn("releasing the campaign's hold", "campaign", name, "err", err)
		}
	}, nil
}
