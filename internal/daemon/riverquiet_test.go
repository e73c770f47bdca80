package daemon

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

// The queue's settings are read once an interval, on an injected clock;
// a failed read is not kept, and a clock that steps back reads again.
func TestQuietPollsReadTheQueueOncePerInterval(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	now := t0
	p := &quietPolls{every: time.Minute, now: func() time.Time { return now }}
	reads := 0
	var fail error
	read := func() (*rivertype.Queue, error) {
		reads++
		if fail != nil {
			return nil, fail
		}
		return &rivertype.Queue{Name: "q", UpdatedAt: now}, nil
	}
	for at := time.Duration(0); at < 3*time.Minute; at += 2 * time.Second {
		now = t0.Add(at)
		q, err := p.queue("q", read)
		if err != nil || q == nil || q.Name != "q" {
			t.Fatalf("at %v: %v, %v", at, q, err)
		}
	}
	if reads != 3 {
		t.Errorf("%d reads in 3 minutes of polls every 2 s, want 3", reads)
	}
	now = now.Add(time.Minute)
	fail = errors.New("the archive is down")
	if _, err := p.queue("q", read); err == nil {
		t.Fatal("a failed read answered from the copy")
	}
	fail = nil
	before := reads
	if _, err := p.queue("q", read); err != nil || reads != before+1 {
		t.Errorf("after a failed read: %v, %d reads, want one more", err, reads-before)
	}
	now = now.Add(-time.Hour)
	if _, err := p.queue("q", read); err != nil || reads != before+2 {
		t.Errorf("a clock stepped back kept the copy: %d reads", reads-before)
	}
}

func TestQuietPollsAskForCancellationsOncePerInterval(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	now := t0
	p := &quietPolls{every: time.Minute, now: func() time.Time { return now }}
	asked := 0
	for at := time.Duration(0); at < 5*time.Minute; at += 2 * time.Second {
		now = t0.Add(at)
		if p.cancelsDue() {
			asked++
		}
	}
	if asked != 5 {
		t.Errorf("asked %d times in 5 minutes, want 5", asked)
	}
}

// A job the daemon queues is worked at once: River wakes its producer,
// without waiting for the producer's poll (fetchPoll, a minute), on SQLite
// and on PostgreSQL (whose driver can listen, but a poll-only daemon
// doesn't: quietDriver).
func TestQueuedJobIsFetchedWithoutWaitingForThePoll(t *testing.T) {
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d, err := New(context.Background(), Config{Host: "a", DSN: dsn, Logger: slog.New(slog.DiscardHandler), SpoolDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer d.store.Close()
			defer d.queue.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := d.queue.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer d.queue.Stop(context.Background())
			db := d.store.DB()
			q := `SELECT state FROM river_job WHERE args->>'run_id' = ?`
			if archive.IsPostgres(dsn) {
				q = `SELECT state FROM river_job WHERE args->>'run_id' = $1`
			}
			// The producer's first fetch, at its start, may find the first
			// job; the second, queued once the first is worked (their runs
			// aren't planned, so their workers end at once), is worked
			// soon only if queueing woke the producer.
			for _, run := range []string{"run-1", "run-2"} {
				queued := time.Now()
				if err := d.queue.Enqueue(ctx, "a", run); err != nil {
					t.Fatal(err)
				}
				for {
					var state string
					if err := db.QueryRowContext(ctx, q, run).Scan(&state); err != nil {
						t.Fatal(err)
					}
					if state == "completed" {
						break
					}
					if time.Since(queued) > fetchPoll*2/3 {
						t.Fatalf("%s is still %q %v after it was queued: the producer waited for its poll", run, state, time.Since(queued).Round(time.Millisecond))
					}
					time.Sleep(20 * time.Millisecond) // bounded poll: the job's state, until two thirds of fetchPoll
				}
			}
		})
	}
}
