// Package rrul runs flent's Realtime Response Under Load: a TCP flow
// each way in each of four DSCP classes, with UDP request-response probes
// in three classes before, during and after them, on one time axis.
package rrul

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/rrload"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// Class is a DSCP class as flent's RRUL names it, with the TOS byte its
// sockets carry (the DSCP shifted left by two).
type Class struct {
	Name string
	TOS  int
}

// The classes of flent's rrul test: the flows' (one up and one down in
// each) and the UDP probes'.
var (
	FlowClasses  = []Class{{"BE", 0x00}, {"BK", 0x20}, {"CS5", 0xa0}, {"EF", 0xb8}}
	ProbeClasses = []Class{{"EF", 0xb8}, {"BK", 0x20}, {"BE", 0x00}}
)

// Tests is how many tests a run holds open at the server at once: the
// flows' one bidirectional test, a stream each way per flow class, each
// stream with its class's TOS (spec.Spec.StreamTOS), and one rr test per
// probe class. A server's default --max-tests-per-client (4) admits them.
var Tests = 1 + len(ProbeClasses)

// Defaults are flent's: 60 s of load between 5 s idle before and after
// (its LENGTH and DELAY), and its 0.2 s step; the probes leave every
// 10 ms, as rr --load's.
const (
	DefaultIdle          = 5 * time.Second
	DefaultLoad          = 60 * time.Second
	DefaultAfter         = 5 * time.Second
	DefaultStep          = 200 * time.Millisecond
	DefaultProbeInterval = 10 * time.Millisecond
	probeSize            = "64"
)

// The phases, as the probes' points are labelled (rrload's).
var phaseLabels = []string{rrload.PhaseIdle, rrload.PhaseLoaded, rrload.PhaseAfter}

// Config is one RRUL run.
type Config struct {
	// Client is the server and how to reach it (key, TLS, logger); its
	// Spec is not used.
	Client control.ClientConfig
	// Idle and After are how long the probes run alone before and after
	// the load; Load is how long the flows run.
	Idle, Load, After time.Duration
	// Step is the series' bin and the flows' interval; ProbeInterval the
	// gap between one probe's requests.
	Step, ProbeInterval time.Duration
	// Flow holds the flows' own options (window, congestion control,
	// length); the rest of each flow's spec is set here.
	Flow spec.Spec
	// PathBound, when known (a lab's path), is the most RTT the path can
	// give: a probe's network RTT above it was a host's (rrload.HostDelays).
	PathBound time.Duration
	// Go runs each probe and flow; nil runs it on a new goroutine. (A test
	// in a network namespace passes one that enters it first.)
	Go func(func())
}

func (c Config) withDefaults() Config {
	if c.Step <= 0 {
		c.Step = DefaultStep
	}
	if c.ProbeInterval <= 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	return c
}

// Check says what is wrong with the configuration, before anything runs.
func (c Config) Check() error {
	c = c.withDefaults()
	switch {
	case c.Load <= 0:
		return errors.New("rrul: the load needs a duration")
	case c.Idle < time.Second || c.After < 0:
		return errors.New("rrul: the idle phase needs at least 1 s (the probes' baseline), and the after phase cannot be negative")
	case c.Step < spec.MinInterval:
		return fmt.Errorf("rrul: a step of %v is under %v", c.Step, spec.MinInterval)
	case c.ProbeInterval < time.Millisecond:
		return errors.New("rrul: probes at most every 1 ms")
	}
	if err := c.flowSpec().Validate(); err != nil {
		return fmt.Errorf("rrul: the flows: %w", err)
	}
	return c.probeSpec(ProbeClasses[0]).Validate()
}

// flowSpec is the flows' test: one stream each way per class, stream i
// (and its reverse, P+i) in FlowClasses[i-1].
func (c Config) flowSpec() spec.Spec {
	s := c.Flow
	if s.Protocol == "" {
		s = spec.Default()
	}
	s.Protocol, s.Streams, s.Bidir, s.Reverse, s.TOS = spec.TCP, len(FlowClasses), true, false, 0
	s.StreamTOS = make([]int, len(FlowClasses))
	for i, cl := range FlowClasses {
		s.StreamTOS[i] = cl.TOS
	}
	s.Duration, s.Omit, s.Interval, s.Bytes, s.Blocks = c.Load, 0, c.Step, 0, 0
	return s
}

// streamIDs are the flows' test's streams of class i: up (the client's,
// stream i+1) and down (the server's, stream P+i+1).
func streamIDs(i int) (up, down int) { return i + 1, len(FlowClasses) + i + 1 }

func (c Config) probeSpec(cl Class) spec.Spec {
	return spec.Spec{Protocol: spec.RR, Streams: 1, RRMode: spec.RRUDP, RRSizes: probeSize, RRInterval: c.ProbeInterval,
		TOS: cl.TOS, Duration: c.Idle + c.Load + c.After + time.Minute} // a bound: the phases end it
}

// flowRun is the flows' test: every class's streams, both ways.
type flowRun struct {
	start time.Time // when its connections were up; zero if they never were
	res   *result.Result
	err   error
	up    chan struct{} // closed when started or done
	done  chan struct{}
}

type probeRun struct {
	class   Class
	samples []rr.Sample
	res     *result.Result
	err     error
	done    chan struct{}
}

type startObserver struct{ started func() }

func (o startObserver) Started(*result.Result)                      { o.started() }
func (o startObserver) Interval(*result.Result, result.IntervalRow) {}

// Run runs the probes alone for Idle, with the flows for Load, and alone
// again for After, and reports what it measured (partly, with Error
// set, when something failed).
func Run(ctx context.Context, cfg Config) (*result.RRUL, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	run := cfg.Go
	if run == nil {
		run = func(f func()) { go f() }
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cpuStart, cpuErr := hostmon.ProcessCPU()
	started := time.Now()

	// The probes: each reports ready at its first counted request (after
	// rr's warm-up) or when it ends; the idle phase starts once all are.
	var phase atomic.Int32
	ready := make(chan struct{}, len(ProbeClasses))
	probes := make([]*probeRun, len(ProbeClasses))
	for i, cl := range ProbeClasses {
		pr := &probeRun{class: cl, done: make(chan struct{})}
		probes[i] = pr
		var once sync.Once
		signal := func() { once.Do(func() { ready <- struct{}{} }) }
		pc := rrcontrol.Config{ClientConfig: cfg.Client, Phases: phaseLabels,
			Phase:    func() int { signal(); return int(phase.Load()) },
			OnSample: func(s rr.Sample) { pr.samples = append(pr.samples, s) }}
		pc.Spec = cfg.probeSpec(cl)
		run(func() {
			defer close(pr.done)
			defer signal()
			pr.res, pr.err = rrcontrol.Run(ctx, pc)
		})
	}
	endProbes := func() {
		phase.Store(-1)
		cancelOnTimeout(ctx, cancel, probes)
	}
	for range probes {
		select {
		case <-ready:
		case <-ctx.Done():
		}
	}
	for _, pr := range probes {
		select {
		case <-pr.done:
			endProbes()
			for _, p := range probes {
				<-p.done
			}
			return nil, startError(pr.class.Name+" probe", pr.err)
		default:
		}
	}
	t0 := time.Now()
	var flows *flowRun
	var loadStart, loadEnd time.Time
	if sleepCtx(ctx, cfg.Idle) {
		fr := &flowRun{up: make(chan struct{}), done: make(chan struct{})}
		flows = fr
		var once sync.Once
		up := func() { once.Do(func() { close(fr.up) }) }
		started := func() { fr.start = time.Now(); up() }
		fc := session.ClientConfig{ClientConfig: cfg.Client, Observer: startObserver{started: started}}
		fc.Spec = cfg.flowSpec()
		run(func() {
			defer close(fr.done)
			defer up()
			fr.res, fr.err = session.RunClient(ctx, fc)
		})
		<-fr.up
		// A flow test the server refused leaves no load: the run ends.
		if fr.start.IsZero() {
			cancel()
			<-fr.done
			endProbes()
			for _, pr := range probes {
				<-pr.done
			}
			return nil, startError("flows", fr.err)
		}
		// The loaded phase starts once every flow's connections are up:
		// the probes before that saw no load.
		loadStart = time.Now()
		phase.Store(1)
		<-fr.done
		loadEnd = time.Now()
		phase.Store(2)
		sleepCtx(ctx, cfg.After)
	}
	endProbes()
	for _, pr := range probes {
		<-pr.done
	}
	out := assemble(cfg, t0, loadStart, loadEnd, flows, probes)
	out.StartedAt = started
	out.Host, out.Port = cfg.Client.Host, cfg.Client.Port
	if cpu, err := hostmon.ProcessCPU(); err == nil && cpuErr == nil {
		u, s, t := hostmon.Usage(cpuStart, cpu)
		out.CPU = result.CPU{UserPercent: u, SystemPercent: s, TotalPercent: t}
	}
	var err error
	if out.Error != "" {
		err = errors.New(out.Error)
	}
	return out, err
}

// cancelOnTimeout ends the probes' tests if they have not ended within
// their control timeout of the phase's end (a stuck server).
func cancelOnTimeout(ctx context.Context, cancel context.CancelFunc, probes []*probeRun) {
	go func() {
		t := time.NewTimer(2 * control.EndReportTimeout)
		defer t.Stop()
		for _, pr := range probes {
			select {
			case <-pr.done:
			case <-t.C:
				cancel()
				return
			case <-ctx.Done():
				return
			}
		}
	}()
}

// startError says why a probe or the flows' test ended before its phase
// began: a server's refusal (one that admits fewer tests from one client
// than a run holds open, say) with what a run holds open, or another
// failure (a congestion control the kernel lacks, no route, a server too
// old to set a TOS per stream) as it is.
func startError(what string, err error) error {
	if err == nil {
		err = errors.New("it ended before it started")
	} else if !errors.Is(err, control.ErrRefused) {
		return fmt.Errorf("rrul: the %s: %w", what, err)
	}
	return fmt.Errorf("rrul: the %s: %w (a run holds %d tests open at the server at once: the flows' one, %d streams each way, and %d probes')",
		what, err, Tests, len(FlowClasses), len(ProbeClasses))
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
