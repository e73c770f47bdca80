// Package rrload measures latency under load: request-response probes
// (internal/rr/rrcontrol) before, during and after a bulk test
// (session.RunClient) against the same server.
package rrload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// The phases of a test under load, as RR points are labelled.
const (
	PhaseIdle   = "idle"
	PhaseLoaded = "loaded"
	PhaseAfter  = "after"
)

// Config is latency under load (docs/metrics.md, "Latency under load";
// flent's RRUL idea): request-response probes before (idle), during
// (loaded) and after a bulk test.
type Config struct {
	// Probe is the request-response test, with one size; its duration is
	// set from the phases.
	Probe rrcontrol.Config
	// Idle and After are how long the probes run alone before and after
	// the load.
	Idle, After time.Duration
	// Load is the bulk test (session.RunClient); its Duration is the
	// loaded phase. It runs against Probe's server.
	Load spec.Spec
	// PathBound, when known, is the most RTT the path can give: its
	// floor plus both directions' queues plus the emulator's own lateness
	// (a lab path's configuration). A network RTT above it was added by a
	// host: HostDelays flags it.
	PathBound time.Duration
	// Go runs the load's client; nil runs it on a new goroutine. (A test
	// in a network namespace passes one that enters the namespace first:
	// the load's connections are dialled from that goroutine.)
	Go func(func())
}

type loadObserver struct{ started func() }

func (o loadObserver) Started(*result.Result)                      { o.started() }
func (o loadObserver) Interval(*result.Result, result.IntervalRow) {}

// Run runs the probes and the load, and reports the probes'
// phases as RR points labelled PhaseIdle, PhaseLoaded and PhaseAfter,
// with RR.Load saying what the load did to the RTT.
func Run(ctx context.Context, cfg Config) (*result.Result, error) {
	if len(cfg.Probe.Spec.RRSizeList()) != 1 {
		return nil, errors.New("latency under load: give one probe size")
	}
	if cfg.Load.Duration <= 0 {
		return nil, errors.New("latency under load: the load needs a duration")
	}
	if err := cfg.Load.Validate(); err != nil {
		return nil, fmt.Errorf("the load: %w", err)
	}
	run := cfg.Go
	if run == nil {
		run = func(f func()) { go f() }
	}
	// The probe test's own bound: every phase, the load's setup, and a
	// margin; the phases end it.
	probe := cfg.Probe
	probe.Spec.RRCount = 0
	probe.Spec.Duration = cfg.Idle + cfg.Load.Duration + cfg.After + time.Minute
	var phase atomic.Int32
	probe.Phases = []string{PhaseIdle, PhaseLoaded, PhaseAfter}
	// The idle phase's clock starts at the first counted probe, not when
	// the data path is up: the prober's warm-up exchanges come between,
	// 16 round trips (0.5 s at 19 ms beside a CPU hog) the idle phase
	// would otherwise lose.
	firstProbe := make(chan struct{})
	var firstOnce sync.Once
	probe.Phase = func() int {
		firstOnce.Do(func() { close(firstProbe) })
		return int(phase.Load())
	}

	type loadOut struct {
		res *result.Result
		err error
	}
	loadDone := make(chan loadOut, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	coordDone := make(chan struct{})
	started := make(chan struct{})
	probe.Started = func() { close(started) }
	go func() {
		defer close(coordDone)
		defer phase.Store(-1)
		for _, ch := range []chan struct{}{started, firstProbe} {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
		if !sleepCtx(ctx, cfg.Idle) {
			return
		}
		run(func() {
			lc := session.ClientConfig{ClientConfig: cfg.Probe.ClientConfig} // the probes' server, key and TLS
			lc.Spec = cfg.Load
			lc.Observer = loadObserver{started: func() { phase.Store(1) }}
			res, err := session.RunClient(ctx, lc)
			loadDone <- loadOut{res, err}
		})
		var lo loadOut
		select {
		case lo = <-loadDone:
		case <-ctx.Done():
			lo = <-loadDone
		}
		phase.Store(2)
		loadDone <- lo
		sleepCtx(ctx, cfg.After)
	}()
	res, err := rrcontrol.Run(ctx, probe)
	cancel()
	<-coordDone
	var lo loadOut
	select {
	case lo = <-loadDone:
	default:
		lo.err = errors.New("the load did not run")
	}
	if res == nil {
		return nil, err
	}
	if r := res.Local.RR; r != nil {
		r.Load = loadSummary(cfg.Load, r.Points, lo.res, lo.err)
		r.Load.HostDelays = HostDelays(r.Points, cfg.PathBound)
		r.Load.Phases = phasesRun(cfg, r.Points)
		if err == nil {
			for _, ph := range r.Load.Phases {
				if ph.Incomplete {
					err = fmt.Errorf("latency under load: the %s phase ran %.2f s of %.2f s", ph.Label, ph.Seconds, ph.PlannedSeconds)
					break
				}
			}
		}
	}
	if err == nil && lo.err != nil {
		err = fmt.Errorf("the load: %w", lo.err)
	}
	if err != nil && res.Error == "" {
		res.Error = err.Error()
	}
	return res, err
}

// phasesRun sets each phase's plan beside what it ran. A phase that ran
// under nine tenths of its plan is incomplete: its figures are real but
// cover less than was asked, and must not read as the whole.
func phasesRun(cfg Config, points []result.RRPoint) []result.RRPhase {
	planned := map[string]time.Duration{PhaseIdle: cfg.Idle, PhaseLoaded: cfg.Load.Duration + cfg.Load.Omit, PhaseAfter: cfg.After}
	var out []result.RRPhase
	for _, label := range []string{PhaseIdle, PhaseLoaded, PhaseAfter} {
		ph := result.RRPhase{Label: label, PlannedSeconds: planned[label].Seconds()}
		for _, p := range points {
			if p.Label == label {
				ph.Seconds = p.Seconds
			}
		}
		ph.Incomplete = ph.Seconds < 0.9*ph.PlannedSeconds
		out = append(out, ph)
	}
	return out
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

// loadSummary compares the loaded phase's RTT with the idle one's and
// notes what the load carried.
func loadSummary(load spec.Spec, points []result.RRPoint, res *result.Result, err error) *result.RRLoad {
	l := &result.RRLoad{Protocol: load.Protocol, Streams: load.Streams, Direction: "up", LoadResult: res}
	switch {
	case load.Bidir:
		l.Direction = "both"
	case load.Reverse:
		l.Direction = "down"
	}
	if err != nil {
		l.LoadError = err.Error()
	}
	var idle, loaded *result.RRPoint
	for i := range points {
		switch points[i].Label {
		case PhaseIdle:
			idle = &points[i]
		case PhaseLoaded:
			loaded = &points[i]
		}
	}
	if idle != nil && loaded != nil && idle.Completed > 0 && loaded.Completed > 0 {
		a, b := idle.RTT, loaded.RTT
		l.Increase = result.Percentiles{
			Count: b.Count, Min: b.Min - a.Min, Mean: b.Mean - a.Mean, P50: b.P50 - a.P50,
			P90: b.P90 - a.P90, P99: b.P99 - a.P99, P999: b.P999 - a.P999, Max: b.Max - a.Max,
		}
	}
	if res != nil {
		for _, d := range res.Directions() {
			lost := udpLostPercent(d)
			if d.SenderRole == result.RoleClient {
				l.UpBitsPerSecond, l.UpLostPercent = d.Received.BitsPerSecond(), lost
			} else {
				l.DownBitsPerSecond, l.DownLostPercent = d.Received.BitsPerSecond(), lost
			}
		}
	}
	return l
}

// udpLostPercent is a direction's datagram loss over its receivers' UDP
// figures, or nil when it carried no UDP.
func udpLostPercent(d result.Direction) *float64 {
	var u result.UDP
	for _, f := range d.Flows {
		if f.Received != nil && f.Received.UDP != nil {
			u.Lost += f.Received.UDP.Lost
			u.Expected += f.Received.UDP.Expected
		}
	}
	if u.Expected == 0 {
		return nil
	}
	p := u.LostPercent()
	return &p
}

// A host added delay in a phase when its share rose above the idle
// phase's by more than hostDelayMin and hostDelayShare of the idle
// network RTT's median: scheduling noise of a few hundred µs is not worth
// a flag on a long path, and a path of 50 µs is not one to flag 1 ms on
// either way.
const (
	hostDelayMin   = 1000.0 // µs
	hostDelayShare = 0.1
)

// HostDelays names the phases in which a host, not the network, added
// delay to the probes, against the idle phase:
//
//   - the server: its own service time (T3 − T2, taken on its side of
//     the sockets) rose at the 99th percentile;
//   - either, in any phase, idle too: the point's own host flags
//     (result.RRHostFlag, from each transaction's timestamps) say the
//     host delayed transactions inside its network RTT's p99;
//   - the client: the network RTT (T4 − T1 less the server's time and
//     the client's receive delay, which still holds the client's own
//     scheduling between T1 and the socket) rose above pathBound, the
//     most the path can give, when that is known (0: not known, not
//     judged) and no flag of the client's already covers the phase.
func HostDelays(points []result.RRPoint, pathBound time.Duration) []result.RRHostDelay {
	var idle *result.RRPoint
	for i := range points {
		if points[i].Label == PhaseIdle && points[i].Completed > 0 {
			idle = &points[i]
		}
	}
	var out []result.RRHostDelay
	for _, p := range points {
		if p.Completed == 0 || p.Label == "" {
			continue
		}
		if idle != nil && p.Label != PhaseIdle {
			added := p.ServerTime.P99 - idle.ServerTime.P99
			if added > max(hostDelayMin, hostDelayShare*idle.NetworkRTT.P50) {
				out = append(out, result.RRHostDelay{Phase: p.Label, Host: result.RoleServer, AddedUs: added,
					Reason: fmt.Sprintf("the server's own service time (T3 − T2) p99 was %.3f ms against %.3f ms idle: the server host was slow to answer, not the network",
						p.ServerTime.P99/1e3, idle.ServerTime.P99/1e3)})
			}
		}
		for _, f := range evidenceFlags(p) {
			if !flagged(out, p.Label, f.Host) {
				out = append(out, f)
			}
		}
		if bound := float64(pathBound.Microseconds()); bound > 0 && p.NetworkRTT.P99 > bound && !flagged(out, p.Label, result.RoleClient) {
			out = append(out, result.RRHostDelay{Phase: p.Label, Host: result.RoleClient, AddedUs: p.NetworkRTT.P99 - bound,
				Reason: fmt.Sprintf("the network RTT p99 was %.3f ms, above the %.3f ms the path can give: the client's own scheduling, inside its timestamps, added the rest",
					p.NetworkRTT.P99/1e3, bound/1e3)})
		}
	}
	return out
}

// evidenceFlags turns a point's p99 host flags into RRHostDelays (the
// max's flags stay on the point: a single transaction is not a phase's).
func evidenceFlags(p result.RRPoint) []result.RRHostDelay {
	var out []result.RRHostDelay
	for _, fig := range []string{"p99"} {
		for _, f := range p.HostFlags {
			if f.Figure != fig || flagged(out, p.Label, f.Host) {
				continue
			}
			added, without := f.ShareUs, "every transaction was delayed"
			if f.WithoutUs != nil {
				added = f.NetworkRTTUs - *f.WithoutUs
				without = fmt.Sprintf("%.3f ms without them", *f.WithoutUs/1e3)
			}
			share := "its T3 − T2"
			if f.Host == result.RoleClient {
				share = "T1 to its send's return plus T4 after the kernel's receive time"
			}
			out = append(out, result.RRHostDelay{Phase: p.Label, Host: f.Host, AddedUs: added,
				Reason: fmt.Sprintf("the %s's own timestamps (%s) show %d transactions delayed by up to %.3f ms; network RTT %s %.3f ms, %s",
					f.Host, share, f.Transactions, f.ShareUs/1e3, f.Figure, f.NetworkRTTUs/1e3, without)})
		}
	}
	return out
}

func flagged(ds []result.RRHostDelay, phase, host string) bool {
	for _, d := range ds {
		if d.Phase == phase && d.Host == host {
			return true
		}
	}
	return false
}
