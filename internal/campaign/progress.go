package campaign

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/units"
)

// RunOverhead is the time a run takes beyond its test: connecting, the
// server's report, storing.
const RunOverhead = time.Second

// PrintPlan writes runs, one a line, and their estimated time. Windows
// above this host's buffer limits get a note: they measure the limit.
func PrintPlan(w io.Writer, s *Spec, runs []Run, length func(Run) time.Duration) {
	// The server's limits are known only once a run reports them (table
	// says then).
	l, _ := hostmon.ReadLimits()
	WritePlan(w, s, runs, length, l.RmemMax, l.WmemMax)
}

// WritePlan is PrintPlan with the host's limits given (0: unknown).
func WritePlan(w io.Writer, s *Spec, runs []Run, length func(Run) time.Duration, rmemMax, wmemMax int64) {
	for i, r := range runs {
		target := ""
		if len(s.Targets) > 1 {
			target = r.Point.Target + " "
		}
		fmt.Fprintf(w, "%4d  %s  %s%s  rep %d\n", i+1, r.ID, target, r.Point.Label(), r.Rep)
	}
	est := s.Estimate(runs, length, RunOverhead)
	fmt.Fprintf(w, "%s, estimated %s (order %s, pause %s)\n", units.Count(len(runs), "run"), est.Round(time.Second), s.Order, s.Pause)
	if rmemMax > 0 || wmemMax > 0 {
		for _, note := range SameWindows(s.Windows(), rmemMax, wmemMax) {
			fmt.Fprintf(w, "NOTE on this host: %s\n", note)
		}
	}
}

// Progress says how a sweep's runs go: a line per attempt and, on a
// terminal, a bar above which the lines print, with the run under way
// and the time the runs left will take.
type Progress struct {
	Out   io.Writer
	Spec  *Spec
	Total int                     // the campaign's runs, done before or not
	Todo  []Run                   // the runs this sweep runs
	Tests map[string]measure.Test // by point key (Tests): each run's length
	// Bar draws the bar (stdout is a terminal, and not --quiet).
	Bar bool

	current  string
	lines    io.Writer // the bar's writer, which prints above the bar
	bar      *mpb.Bar
	progress *mpb.Progress
}

// Start says what the sweep runs, stored in the archive dsn, and draws
// the bar when there is one; ctx ends it.
func (p *Progress) Start(ctx context.Context, dsn string) {
	fmt.Fprintf(p.Out, "campaign %s: %s, %d to run, order %s (shuffle key %d), archive %s\n",
		p.Spec.Name, units.Count(p.Total, "run"), len(p.Todo), p.Spec.Order, p.Spec.ShuffleKey, dsn)
	if !p.Bar || len(p.Todo) == 0 {
		return
	}
	length := Length(p.Tests)
	p.progress = mpb.NewWithContext(ctx, mpb.WithOutput(p.Out), mpb.WithWidth(40))
	p.bar = p.progress.AddBar(int64(len(p.Todo)),
		mpb.PrependDecorators(decor.Name(p.Spec.Name+" "), decor.CountersNoUnit("%d/%d"), decor.Any(func(decor.Statistics) string { return " " + p.current })),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Any(func(st decor.Statistics) string {
			// The plan knows each run's length, so the time left is
			// the estimate of the runs not yet done.
			done := int(st.Current)
			if done > len(p.Todo) {
				done = len(p.Todo)
			}
			return " ETA " + p.Spec.Estimate(p.Todo[done:], length, RunOverhead).Round(time.Second).String()
		})))
	p.lines = p.progress
}

// Begin is the Executor's Begin: the run under way.
func (p *Progress) Begin(r Run, _ int) { p.current = r.Point.Label() }

// Done is the Executor's Done: it says how a run went, and counts it on
// the bar once it will not be tried again.
func (p *Progress) Done(r Run, attempt int, rec *archive.Run, runErr error) {
	p.say(r, attempt, rec, runErr)
	if p.bar != nil && (runErr == nil || attempt == 2) {
		p.bar.Increment()
	}
}

// Finish takes the bar down (cut short when the sweep was), says how the
// sweep went, and returns its error: interrupted, or runs that failed
// twice. Either way a resume runs what is missing.
func (p *Progress) Finish(out Outcome) error {
	if p.progress != nil {
		if out.Cancelled || p.bar.Current() < int64(len(p.Todo)) {
			p.bar.Abort(false)
		}
		p.progress.Wait()
	}
	aborted := ""
	if out.Aborted > 0 {
		aborted = fmt.Sprintf(", %d aborted (interrupted)", out.Aborted)
	}
	name := p.Spec.Name
	fmt.Fprintf(p.Out, "campaign %s: %d finished, %d failed%s, %d done before\n", name, out.Finished, len(out.Failed), aborted, p.Total-len(p.Todo))
	if out.Cancelled {
		return fmt.Errorf("interrupted: resume with wireperf sweep --resume %s", name)
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%s failed twice (stored with their errors); resume with wireperf sweep --resume %s", units.Count(len(out.Failed), "run"), name)
	}
	return nil
}

func (p *Progress) println(format string, args ...any) {
	w := p.Out
	if p.lines != nil {
		w = p.lines
	}
	fmt.Fprintf(w, format+"\n", args...)
}

// say writes how a run went.
func (p *Progress) say(r Run, attempt int, rec *archive.Run, runErr error) {
	if rec == nil {
		p.println("%v", runErr)
		return
	}
	retry := ""
	if attempt > 1 {
		retry = " (retry)"
	}
	head := fmt.Sprintf("[%d/%d] %s %s rep %d%s", r.Seq+1, p.Total, r.ID[:8], r.Point.Label(), r.Rep, retry)
	if runErr != nil {
		p.println("%s: %s: %s", head, rec.State, rec.Error)
		return
	}
	p.println("%s: %s", head, rec.Summary.Line())
}
