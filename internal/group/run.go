package group

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/result"
)

// Config is a group test.
type Config struct {
	Pairs []Pair
	// Cred is the controller's agent key.
	Cred *auth.Credential
	// StartIn is how long after every pair is set up the pairs start.
	StartIn time.Duration
	// ClockProbes is how many clock exchanges each agent gets.
	ClockProbes int
	// MaxUncertainty, when set, refuses to start when an agent's clock
	// offset is known less well than this.
	MaxUncertainty time.Duration
	// Timeout bounds connecting to an agent and each set-up step.
	Timeout time.Duration
	Logger  *slog.Logger
	// Dial, when set, connects to the agents (a controller inside a lab
	// host dials from there).
	Dial agent.DialFunc
	// OnStart, when set, hears the common start instant once every agent
	// has been told it.
	OnStart func(at time.Time)
}

// Defaults of a group test.
const (
	DefaultStartIn     = 2 * time.Second
	DefaultClockProbes = 8
)

// PairReport is one pair's part of the report.
type PairReport struct {
	Pair  Pair
	Clock *agent.Offset
	// StartedAt is when the pair's sender started, on the controller's
	// clock (zero when it never started).
	StartedAt time.Time
	// Result is the sender's client result: its own end and the
	// receiver's report. Nil when the test never ran.
	Result *result.Result
	// Error says why the pair failed; Partial says its result covers
	// only part of the test.
	Error   string
	Partial bool
}

// Report is a group test's outcome.
type Report struct {
	Pairs []PairReport
	// Start is the common start instant, on the controller's clock.
	Start time.Time
	// Sum is the aggregate on the common time base.
	Sum Sum
	// Skew is the spread of the pairs' actual starts.
	Skew Skew
	// Error is set when the group did not start, or a pair failed.
	Error string
	// Started says the group got past its set-up.
	Started bool
	// Warnings say what, outside the path, limited the group: run through
	// a lab, its router falling behind (lab.RouterWatch).
	Warnings []string
	// Lab names the lab the group ran through and its hosts' TCP buffers
	// (lab.RouterWatch.Line); "" outside a lab.
	Lab string
}

// Failed says some pair did not run to its end.
func (r *Report) Failed() bool { return r.Error != "" }

// Sum is the pairs' received rate added up.
type Sum struct {
	ReceivedBitsPerSecond float64       `json:"received_bits_per_second"`
	Intervals             []SumInterval `json:"intervals"`
	// LeftOut names the pairs whose rows are not in Intervals, and why:
	// rows that cannot be placed on the controller's clock (no clock
	// offset from the agent, or no start time) would add up rows of
	// different times. Their totals are still in ReceivedBitsPerSecond.
	LeftOut []string `json:"left_out,omitempty"`
}

// SumInterval is the aggregate over one interval of the common time base:
// seconds since the common start instant. An omitted interval lies in the
// omitted start (-O): shown with its rate, counted in no total.
type SumInterval struct {
	Start                 float64 `json:"start"`
	End                   float64 `json:"end"`
	ReceivedBitsPerSecond float64 `json:"received_bits_per_second"`
	Omitted               bool    `json:"omitted,omitempty"`
}

// Skew is the spread between the first and the last pair's start, on the
// controller's clock, with the sum of those two agents' offset
// uncertainties.
type Skew struct {
	Seconds            float64 `json:"seconds"`
	UncertaintySeconds float64 `json:"uncertainty_seconds"`
}

// Run runs a group test. The returned report is never nil; its Error says
// what failed. A set-up failure starts nothing; cancelling ctx stops
// every pair cleanly.
func Run(ctx context.Context, cfg Config) *Report {
	if cfg.StartIn <= 0 {
		cfg.StartIn = DefaultStartIn
	}
	if cfg.ClockProbes <= 0 {
		cfg.ClockProbes = DefaultClockProbes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	rep := &Report{Pairs: make([]PairReport, len(cfg.Pairs))}
	for i, p := range cfg.Pairs {
		rep.Pairs[i].Pair = p
	}
	conns := make([]*agent.Conn, len(cfg.Pairs))
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	if err := setUp(ctx, cfg, rep, conns); err != nil {
		rep.Error = "group not started: " + err.Error()
		return rep
	}
	rep.Started = true
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	rep.Start = time.Now().Add(cfg.StartIn)
	for i, c := range conns {
		if err := c.Start(rep.Start.UnixNano() + rep.Pairs[i].Clock.OffsetNs); err != nil {
			rep.Pairs[i].Error = err.Error()
		}
	}
	cfg.Logger.Info("group starting", "at", rep.Start, "pairs", len(cfg.Pairs))
	if cfg.OnStart != nil {
		cfg.OnStart(rep.Start)
	}
	stopAll := context.AfterFunc(ctx, func() {
		for _, c := range conns {
			_ = c.Stop("interrupted")
		}
	})
	defer stopAll()
	var wg sync.WaitGroup
	for i, c := range conns {
		if rep.Pairs[i].Error != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			collect(&rep.Pairs[i], c, waitFor(cfg))
		}()
	}
	wg.Wait()
	rep.Sum = Aggregate(rep.Start, rep.Pairs)
	rep.Skew = StartSkew(rep.Pairs)
	rep.Warnings, rep.Lab = router.BehindLines(time.Now()), router.Line()
	var failed []string
	for _, p := range rep.Pairs {
		if p.Error != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", p.Pair.Name(), p.Error))
		}
	}
	switch {
	case ctx.Err() != nil:
		rep.Error = "interrupted"
	case len(failed) == 1:
		rep.Error = "pair " + failed[0]
	case len(failed) > 1:
		rep.Error = fmt.Sprintf("%d pairs failed; first %s", len(failed), failed[0])
	}
	return rep
}

// waitFor bounds the wait for a pair's report: its test, the start and
// a margin for the ending; a test sized in bytes waits longer.
func waitFor(cfg Config) time.Duration {
	var longest time.Duration
	for _, p := range cfg.Pairs {
		d := p.Spec.Duration
		if d == 0 {
			d = 10 * time.Minute
		}
		longest = max(longest, d)
	}
	return cfg.StartIn + longest + 30*time.Second
}

// setUp connects to every agent, measures its clock and has it prepare
// its test, all at once; the first failure, by pair order, is the error.
func setUp(ctx context.Context, cfg Config, rep *Report, conns []*agent.Conn) error {
	errs := make([]error, len(cfg.Pairs))
	var wg sync.WaitGroup
	for i, p := range cfg.Pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := agent.DialWith(ctx, cfg.Dial, p.Sender.String(), cfg.Cred, cfg.Timeout)
			if err != nil {
				errs[i] = err
				return
			}
			conns[i] = c
			defer context.AfterFunc(ctx, func() { _ = c.Close() })()
			off, err := c.MeasureClock(cfg.ClockProbes)
			if err != nil {
				errs[i] = err
				return
			}
			rep.Pairs[i].Clock = &off
			if cfg.MaxUncertainty > 0 && time.Duration(off.UncertaintyNs) > cfg.MaxUncertainty {
				errs[i] = fmt.Errorf("agent %s: clock offset known within ±%v, more than --max-uncertainty %v",
					p.Sender, time.Duration(off.UncertaintyNs), cfg.MaxUncertainty)
				return
			}
			if err := c.Prepare(agent.Prepare{Target: p.Receiver.String(), Spec: p.Spec}); err != nil {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	var first error
	for i, err := range errs {
		if err == nil {
			continue
		}
		rep.Pairs[i].Error = err.Error()
		if first == nil {
			first = fmt.Errorf("pair %s: %w", cfg.Pairs[i].Name(), err)
		}
	}
	if first == nil && ctx.Err() != nil {
		first = errors.New("interrupted")
	}
	return first
}

// collect waits for one agent's report and fills its pair's part.
func collect(pr *PairReport, c *agent.Conn, within time.Duration) {
	out, err := c.Wait(within)
	if out.StartedAtNs != 0 && pr.Clock != nil {
		pr.StartedAt = time.Unix(0, out.StartedAtNs-pr.Clock.OffsetNs)
	}
	if err != nil {
		pr.Error = err.Error()
		return
	}
	if len(out.Report.Result) > 0 {
		var r result.Result
		if jerr := json.Unmarshal(out.Report.Result, &r); jerr != nil {
			pr.Error = fmt.Sprintf("agent %s: unreadable result: %v", c.Addr, jerr)
			return
		}
		pr.Result = &r
	}
	if out.Report.Error != "" {
		pr.Error = out.Report.Error
		pr.Partial = pr.Result != nil
	}
}
