package runner

import (
	"context"
	"io"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/runner/mcastrun"
)

// ClientEmitter is the emitter a client test's output flags ask for
// (-J, --json-stream, -y C, -e, --timestamps, --forceflush), writing to w.
func ClientEmitter(c *measure.Client, w io.Writer) emit.Emitter {
	opt := emit.Options{Format: c.Format, Title: c.Spec.Title, Verbose: c.Verbose}
	if c.Timestamps != "" || c.ForceFlush {
		lines := &emit.LineWriter{W: w, Flush: c.ForceFlush}
		if !c.JSON && !c.JSONStream && c.ReportStyle == "" { // stamps are for text, as in iperf3
			lines.Timestamps = c.Timestamps
		}
		w = lines
	}
	switch {
	case c.JSON:
		return &emit.JSON{W: w, Opt: opt}
	case c.JSONStream:
		return &emit.JSONStream{W: w, Opt: opt, Full: c.JSONStreamFull}
	case c.ReportStyle == "C":
		return &emit.Iperf2CSV{W: w}
	case c.Enhanced:
		return &emit.Iperf2Enhanced{W: w, Opt: opt}
	default:
		return &emit.Text{W: w, Opt: opt}
	}
}

// ClientReported runs a client test (Client) and writes its report to w
// as the test's flags ask (ClientEmitter): each interval as it closes,
// then the summary, with what --bottleneck and --tcpinfo-csv add
// (ApplyTCPInfo) and, run through `wireperf lab exec`, a warning when the
// lab's router fell behind during the test. o.Observer is replaced by
// the report's. The error is the test's, else the report's.
func ClientReported(ctx context.Context, c *measure.Client, host string, o Options, w io.Writer, tcpinfoCSV string) (*result.Result, error) {
	if mcastrun.IsGroup(host) { // iperf 2's multicast test: a sender alone, with its own report
		return nil, mcastrun.Client(ctx, c, host, w)
	}
	em := ClientEmitter(c, w)
	obs := &emit.Observer{Emitter: em, Host: host, Port: c.Port}
	o.Observer = obs
	router := lab.WatchRouter() // nil unless run through "wireperf lab exec"
	res, runErr := Client(ctx, c, host, o)
	if err := ApplyTCPInfo(res, c.BottleneckBps, tcpinfoCSV); err != nil && runErr == nil {
		runErr = err
	}
	if res != nil {
		if line := router.Behind(time.Now(), lab.RouterWait); line != "" {
			res.Warnings = append(res.Warnings, line)
		}
		res.Lab = router.Line()
		if err := em.Summary(res); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr == nil {
		runErr = obs.Err
	}
	return res, runErr
}

// IsMulticast reports whether host is a multicast group: the client then
// sends to it alone (ClientReported), with no server and no result to
// store.
func IsMulticast(host string) bool { return mcastrun.IsGroup(host) }

// WriteRR writes a request-response test's report to w: -J's document,
// or the text table. The error is the writer's.
func WriteRR(r *measure.RR, res *result.Result, w io.Writer) error {
	if r.JSON {
		return (&emit.RRJSON{W: w}).Write(res)
	}
	return (&emit.RRText{W: w, Opt: emit.Options{Title: r.Spec.Title}}).Write(res)
}
