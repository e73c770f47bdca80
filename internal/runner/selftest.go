package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/session"
)

// SelfTest runs a server and the client test c against it on loopback,
// in one process, and checks that every byte sent arrived. em reports
// the test (its intervals and its summary); tcpinfoCSV, when set, is
// the file the TCP_INFO timelines are written to (ApplyTCPInfo). The
// result is returned, when there is one, with the test's error.
func SelfTest(ctx context.Context, c *measure.Client, em emit.Emitter, tcpinfoCSV string) (*result.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := server.New(server.Config{
		Bind: "127.0.0.1", Limits: server.DefaultLimits(),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := srv.Listen(); err != nil {
		return nil, err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	c.Port = srv.Addr().Port
	obs := &emit.Observer{Emitter: em, Host: "127.0.0.1", Port: c.Port}
	res, err := session.RunClient(ctx, session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: c.Port, ConnectTimeout: c.ConnectTimeout, Spec: c.Spec,
	}, Observer: obs})
	if aerr := ApplyTCPInfo(res, c.BottleneckBps, tcpinfoCSV); aerr != nil && err == nil {
		err = aerr
	}
	if res != nil {
		res.Local.OneProcess, res.Remote.OneProcess = true, true
		if err := em.Summary(res); err != nil {
			return res, err
		}
	}
	cancel()
	<-served
	if err != nil {
		return res, fmt.Errorf("selftest failed: %w", err)
	}
	for _, d := range res.Directions() {
		if d.Sent.Bytes == 0 || d.Sent.Bytes != d.Received.Bytes {
			return res, fmt.Errorf("selftest failed: %s sent %d bytes but %d arrived", d.Label(), d.Sent.Bytes, d.Received.Bytes)
		}
	}
	return res, nil
}

// ApplyTCPInfo adds what the command line says to a finished result
// (the bottleneck's rate, for the Transfer Time Ratio; 0: not known) and
// writes its TCP_INFO timelines to the CSV file csvPath when one is
// named. res may be nil: there is nothing to add to.
func ApplyTCPInfo(res *result.Result, bottleneckBps float64, csvPath string) error {
	if res == nil {
		return nil
	}
	if bottleneckBps > 0 {
		res.Local.BottleneckBps = bottleneckBps
	}
	if csvPath == "" {
		return nil
	}
	out, err := os.Create(csvPath)
	if err != nil {
		return fmt.Errorf("--tcpinfo-csv: %w", err)
	}
	if err := emit.WriteTCPTimelineCSV(out, res); err != nil {
		_ = out.Close()
		return fmt.Errorf("--tcpinfo-csv %s: %w", csvPath, err)
	}
	return out.Close()
}
