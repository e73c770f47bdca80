package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/runner/udpmonrun"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// UDPMon runs a UDPmon sweep against host and writes its report to w:
// the table row by row as the points finish (with a progress bar below
// it when bar is set: w is a terminal), or the -J or CSV document at the
// end. It returns the sweep with the run's error, which is also set when
// the report could not be written or every point failed; the sweep is
// nil when not one point ran (the error says why).
func UDPMon(ctx context.Context, u *measure.UDPMon, host string, o Options, w io.Writer, bar bool) (*udpmon.Sweep, error) {
	cfg := UDPMonConfig(u, host, o)
	table := u.CSV == u.JSON // neither: the table, row by row
	tw := &emit.UDPMonTable{W: w, Opt: emit.Options{Title: u.Title}}
	var werr error
	keep := func(err error) {
		if err != nil && werr == nil {
			werr = err
		}
	}
	total := len(cfg.Sizes) * len(cfg.Spacings)
	clearBar := func() {
		if bar {
			keep(write(w, "\r\033[K"))
		}
	}
	drawBar := func(done int, eta time.Duration) {
		if bar {
			keep(write(w, "\r"+udpmon.Bar(done, total, eta, 30)))
		}
	}
	// The table's header waits for the first point, so that a sweep that
	// cannot start (a wrong port) prints one line: why.
	headed := false
	header := func() {
		if table && !headed {
			keep(tw.Header(&udpmon.Sweep{Server: cfg.Server, Reverse: cfg.Reverse, Count: cfg.Count}))
		}
		headed = true
	}
	drawBar(0, 0)
	cfg.OnPoint = func(p *udpmon.Point, done, total int, eta time.Duration) {
		clearBar()
		header()
		if table {
			keep(tw.Row(p))
		}
		drawBar(done, eta)
	}
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	if router != nil {
		cfg.Router = func(end time.Time) (udpmon.RouterCounts, error) {
			c, err := router.Counts(end, lab.RouterWait)
			return udpmon.RouterCounts{InAtoB: c.AtoB.In, LostAtoB: c.AtoB.Lost, InBtoA: c.BtoA.In, LostBtoA: c.BtoA.Lost}, err
		}
	}
	sw, runErr := udpmonrun.Run(ctx, cfg)
	clearBar()
	if sw == nil || len(sw.Points) == 0 && runErr != nil {
		return nil, runErr
	}
	sw.Warnings, sw.Lab = append(sw.Warnings, router.BehindLines(time.Now())...), router.Line()
	header()
	switch {
	case u.JSON:
		keep((&emit.UDPMonJSON{W: w}).Write(sw))
	case u.CSV:
		keep((&emit.UDPMonCSV{W: w}).Write(sw))
	default:
		keep(tw.Footer(sw))
	}
	if runErr == nil && werr != nil {
		runErr = fmt.Errorf("writing the report: %w", werr)
	}
	if runErr == nil && sw.Failed == len(sw.Points) {
		runErr = fmt.Errorf("every point failed: %s", sw.Points[0].Error)
	}
	return sw, runErr
}

func write(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}
