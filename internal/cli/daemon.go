package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/daemon"
)

func newDaemonCmd(e env) *cobra.Command {
	var configFile, db string
	log := logOptions{level: "info", format: "text"}
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Serve tests and run this host's share of the schedule kept in the archive",
		Long: `wireperf daemon runs on each host of a mesh: a test server (with the agent role when
the configuration names a key), a worker that runs this host's scheduled tests at their instants,
and an HTTP API. Every daemon of a mesh uses the same archive (PostgreSQL); one host alone can use
an SQLite file. docs/daemon.md describes the configuration file.`,
		Example: `  wireperf daemon --config /etc/wireperf/daemon.yaml --db postgres://wireperf@db.example.net/wireperf`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile == "" {
				return usagef("--config FILE is needed (docs/daemon.md describes it)")
			}
			fc, err := daemon.ReadConfig(configFile)
			if err != nil {
				return usageError{err}
			}
			if db == "" {
				db = fc.DB
			}
			dsn, err := archive.ResolveDSN(db)
			if err != nil {
				return err
			}
			if _, err := daemon.PoolerDSN(dsn, fc.Host); err != nil {
				return usageError{err} // e.g. prepared statements, which a pooler in transaction mode loses
			}
			if fc.Log != "" {
				log.format = fc.Log
			}
			out, closeOut, err := openOutput(fc.LogFile, e.stderr)
			if err != nil {
				return err
			}
			defer closeOut()
			logger, err := log.logger(out)
			if err != nil {
				return err
			}
			cfg, err := daemon.FromFile(configFile, fc, dsn, logger)
			if err != nil {
				return usageError{err}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := daemon.New(ctx, cfg)
			if err != nil {
				return err
			}
			// The first signal starts the graceful stop; a second one ends
			// the process at once, as the default handler does.
			go func() { <-ctx.Done(); stop() }()
			return d.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the daemon's configuration file (YAML)")
	dbFlag(cmd, &db)
	cmd.Flags().StringVar(&log.level, "log-level", log.level, "debug, info, warn or error")
	return cmd
}
