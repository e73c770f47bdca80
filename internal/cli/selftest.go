package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/session"
)

// newSelftestCmd runs a server and a client on loopback in one process
// and checks that what was sent arrived.
func newSelftestCmd(e env) *cobra.Command {
	f := newClientFlags()
	f.Spec.Duration = 3e9
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Run a server and a client on loopback and check the result",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.finish(cmd); err != nil {
				return err
			}
			return selftest(cmd.Context(), e, f)
		},
	}
	f.register(cmd)
	return cmd
}

func selftest(ctx context.Context, e env, f *clientFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.save { // an archive that can't be opened fails before the test, not after it
		if err := checkArchiveFor(ctx, f.db, ""); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := server.New(server.Config{
		Bind: "127.0.0.1", Limits: server.DefaultLimits(),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err := srv.Listen(); err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	f.Port = srv.Addr().Port
	out, closeOut, err := openOutput(f.logfile, e.stdout)
	if err != nil {
		return err
	}
	defer closeOut()
	em := f.emitter(out)
	obs := &emit.Observer{Emitter: em, Host: "127.0.0.1", Port: f.Port}
	res, err := session.RunClient(ctx, session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: f.Port, ConnectTimeout: f.ConnectTimeout, Spec: f.Spec,
	}, Observer: obs})
	if aerr := f.applyTCPInfo(res); aerr != nil && err == nil {
		err = aerr
	}
	if res != nil {
		res.Local.OneProcess, res.Remote.OneProcess = true, true
		if err := em.Summary(res); err != nil {
			return err
		}
	}
	cancel()
	<-served
	if err != nil {
		return fmt.Errorf("selftest failed: %w", err)
	}
	for _, d := range res.Directions() {
		if d.Sent.Bytes == 0 || d.Sent.Bytes != d.Received.Bytes {
			return fmt.Errorf("selftest failed: %s sent %d bytes but %d arrived", d.Label(), d.Sent.Bytes, d.Received.Bytes)
		}
	}
	if !f.JSON && !f.JSONStream {
		fmt.Fprintln(out, "selftest passed: every byte sent arrived, and both ends agree")
	}
	if f.save {
		id, err := saveRun(ctx, f.db, res, nil, os.Args)
		if err != nil {
			return fmt.Errorf("saving the run: %w", err)
		}
		fmt.Fprintf(e.stderr, "saved as run %s\n", id)
	}
	return nil
}
