package runner

import (
	"context"
	"io"
	"time"

	"github.com/wireperf/wireperf/internal/archive/runrecord"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rrul"
	"github.com/wireperf/wireperf/internal/spec"
)

// RRUL is what `wireperf rrul` asks for beside its server: the phases,
// the series' step, the flows' congestion control, and how the report
// is written.
type RRUL struct {
	Port              int
	Idle, Load, After time.Duration
	Step              time.Duration
	Congestion        string
	JSON              bool
}

// NewRRUL is the command's defaults, flent's.
func NewRRUL() *RRUL {
	return &RRUL{Port: spec.DefaultPort, Idle: rrul.DefaultIdle, Load: rrul.DefaultLoad, After: rrul.DefaultAfter, Step: rrul.DefaultStep}
}

// Config is the run against host (rrul.Config), checked.
func (r *RRUL) Config(host string, o Options) (rrul.Config, error) {
	flow := spec.Default()
	flow.Congestion = r.Congestion
	cfg := rrul.Config{
		Client: control.ClientConfig{Host: host, Port: r.Port, Logger: o.Logger, Auth: o.Auth, TLS: o.TLS},
		Idle:   r.Idle, Load: r.Load, After: r.After, Step: r.Step, Flow: flow,
	}
	return cfg, cfg.Check()
}

// RunRRUL runs an RRUL test against host and writes its report to w.
// Run through `wireperf lab exec`, the path's bound judges the probes'
// host delays and the router's lateness is reported, as rr's.
func RunRRUL(ctx context.Context, r *RRUL, host string, o Options, w io.Writer) (*result.RRUL, error) {
	cfg, err := r.Config(host, o)
	if err != nil {
		return nil, err
	}
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	res, runErr := rrul.Run(ctx, cfg)
	if res == nil {
		return nil, runErr
	}
	res.Warnings = append(res.Warnings, router.BehindLines(time.Now())...)
	// The router's worst lateness is in the bound: read it after the run.
	if bound := router.RTTBound(); bound > 0 {
		res.HostDelays = rrul.HostDelays(res, bound)
	}
	var werr error
	if r.JSON {
		werr = (&emit.RRULJSON{W: w}).Write(res)
	} else {
		werr = (&emit.RRULText{W: w}).Write(res)
	}
	if runErr == nil {
		runErr = werr
	}
	return res, runErr
}

// SaveRRUL stores an RRUL run (--save) in the archive db names; runErr
// makes it a failed run. It returns the run's ID.
func SaveRRUL(ctx context.Context, db string, res *result.RRUL, runErr error, cmdline []string) (string, error) {
	rec, err := runrecord.RRUL(res, runErr, cmdline, time.Now())
	if err != nil {
		return "", err
	}
	return rec.ID, runrecord.Store(ctx, db, rec)
}
