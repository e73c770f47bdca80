package campaign

import (
	"context"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
)

// Executor runs a campaign's runs in order, with the pauses between them
// and one retry of each that failed.
type Executor struct {
	// Recorder runs and stores each run.
	Recorder *Recorder
	// Begin, when set, is told of each attempt as it starts.
	Begin func(r Run, attempt int)
	// Done, when set, is told how each attempt went (attempt is 1, or 2
	// for the retry at the end): the stored run, nil when it could not be
	// stored, and the run's error.
	Done func(r Run, attempt int, rec *archive.Run, err error)
	// Run, when set, runs and stores one run instead of Recorder: the
	// tests' way to execute a campaign without a network. An error is a
	// failed run; the campaign goes on.
	Run func(ctx context.Context, r Run, attempt int) error
	// Pause is the gap between two runs.
	Pause time.Duration
	// Sleep waits d or until ctx ends (tests inject a fake clock).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Outcome counts what happened.
type Outcome struct {
	Ran      int   // runs attempted, retries included
	Finished int   // runs that finished
	Failed   []Run // runs that failed twice
	// Aborted counts the runs cut short when ctx ended: stored aborted, a
	// resume runs them again.
	Aborted   int
	Cancelled bool // ctx ended before the campaign did
}

// Execute runs every run in order, then retries once each run that
// failed. A failure never stops the campaign; the context's end does.
func (x *Executor) Execute(ctx context.Context, runs []Run) Outcome {
	var o Outcome
	var failed []Run
	first := true
	do := func(r Run, attempt int) bool {
		if !first && x.Pause > 0 {
			if err := x.sleep(ctx, x.Pause); err != nil {
				o.Cancelled = true
				return false
			}
		}
		first = false
		if ctx.Err() != nil {
			o.Cancelled = true
			return false
		}
		o.Ran++
		err := x.run(ctx, r, attempt)
		if ctx.Err() != nil {
			// A run that ended well just before ctx did was stored
			// finished; one with an error was cut short (a resume runs it).
			if err == nil {
				o.Finished++
			} else {
				o.Aborted++
			}
			o.Cancelled = true
			return false
		}
		if err != nil {
			if attempt == 1 {
				failed = append(failed, r)
			} else {
				o.Failed = append(o.Failed, r)
			}
			return true
		}
		o.Finished++
		return true
	}
	for _, r := range runs {
		if !do(r, 1) {
			return o
		}
	}
	for _, r := range failed {
		if !do(r, 2) {
			return o
		}
	}
	return o
}

func (x *Executor) run(ctx context.Context, r Run, attempt int) error {
	if x.Begin != nil {
		x.Begin(r, attempt)
	}
	if x.Run != nil {
		return x.Run(ctx, r, attempt)
	}
	rec, err := x.Recorder.Record(ctx, r)
	if x.Done != nil {
		x.Done(r, attempt, rec, err)
	}
	return err
}

func (x *Executor) sleep(ctx context.Context, d time.Duration) error {
	if x.Sleep != nil {
		return x.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
