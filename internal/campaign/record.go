package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner"
	"github.com/wireperf/wireperf/internal/version"
)

// Recorder runs a campaign's runs and stores each in the archive, as the
// run of its ID: the Executor's Run.
type Recorder struct {
	Spec   *Spec
	Store  *archive.Store
	Tests  map[string]measure.Test // by point key (Tests)
	Logger *slog.Logger
	// Notice is told what the user should see while a run goes on (a
	// switch to iperf3's protocol).
	Notice func(string)
}

// Record runs r once and stores it: finished, failed with its error, or
// aborted when ctx ended (a resume runs it again). The stored run is
// returned with the run's error.
func (x *Recorder) Record(ctx context.Context, r Run) (*archive.Run, error) {
	rec := &archive.Run{
		ID: r.ID, Campaign: x.Spec.Name, PointKey: r.Point.Key(), Rep: r.Rep, Seq: r.Seq,
		Source: archive.SourceNative, ToolVersion: version.String(), Cmdline: Cmdline(x.Spec, r.Point),
		RemoteHost: r.Point.Target, Started: time.Now(), Axes: map[string]archive.Axis{},
	}
	for _, st := range r.Point.Settings {
		rec.Axes[st.Axis] = archive.Axis{Num: st.Value.Num, Label: st.Value.Label}
	}
	t, ok := x.Tests[r.Point.Key()]
	if !ok {
		return nil, fmt.Errorf("run %s: point %s has no test", r.ID, r.Point.Label())
	}
	doc, runErr := runner.JSON(ctx, t, r.Point.Target, runner.Options{Logger: x.Logger, Notice: x.Notice})
	rec.Ended = time.Now()
	if len(doc) > 0 {
		rec.Document, rec.DocumentFormat = doc, archive.FormatJSON
		if p, err := archive.ParseDocument(doc); err == nil {
			rec.Summary, rec.Intervals, rec.Hosts, rec.Limits = p.Summary, p.Intervals, p.Hosts, p.Limits
			rec.LocalHost, rec.LocalKernel, rec.RemoteKernel = p.LocalHost, p.LocalKernel, p.RemoteKernel
			if !p.Started.IsZero() {
				rec.Started = p.Started
			}
			if runErr == nil && p.Error != "" {
				runErr = errors.New(p.Error)
			}
		}
	}
	rec.State = archive.StateFinished
	switch {
	case ctx.Err() != nil:
		// A test cut short by Ctrl-C may still end "cleanly" with a
		// partial report: it is not a finished run, and resume runs it.
		rec.State, rec.Error = archive.StateAborted, "interrupted"
		if runErr == nil {
			runErr = ctx.Err()
		}
	case runErr != nil:
		rec.State, rec.Error = archive.StateFailed, archive.ErrorLine(runErr)
	}
	// Stored with a context of its own: an interrupted run is still recorded.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := x.Store.PutRun(sctx, rec); err != nil {
		return nil, fmt.Errorf("%s: not stored: %w", r.ID, err)
	}
	return rec, runErr
}
