package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
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
			cfg := daemon.Config{Host: fc.Host, DSN: dsn, API: fc.Listen, ReadsNeedToken: fc.ReadsNeedToken,
				Grace: daemon.Duration(fc.Grace, 0), Horizon: daemon.Duration(fc.Horizon, 0), PlanEvery: daemon.Duration(fc.PlanEvery, 0),
				Workers: fc.Workers, SpoolDir: fc.SpoolDir, Logger: logger}
			if cfg.API == "" {
				cfg.API = daemon.DefaultAPI
			}
			if fc.TokenFile != "" {
				if cfg.Token, err = daemon.ReadToken(fc.TokenFile); err != nil {
					return usageError{err}
				}
			} else if cfg.ReadsNeedToken {
				return usagef("%s: reads_need_token needs token_file", configFile)
			}
			port := spec.DefaultPort
			if fc.Port != nil {
				port = *fc.Port
			}
			if port != 0 {
				sc := server.Config{Bind: fc.Bind, Port: port, Limits: server.DefaultLimits(), ShutdownGrace: 5 * time.Second, Logger: logger}
				sec := authflags.Server{KeyFile: fc.AuthKeyFile, Iperf3Open: fc.Iperf3Open, Allow: fc.Allow, Deny: fc.Deny, TLSCert: fc.TLSCert, TLSKey: fc.TLSKey}
				if sc.Keys, sc.ACL, sc.TLS, err = sec.Load(); err != nil {
					return usagef("%s: %v", configFile, err)
				}
				sc.Iperf3Open = fc.Iperf3Open
				ag := authflags.Agent{On: fc.AgentKeyFile != "", KeyFile: fc.AgentKeyFile, ClientKeyFile: fc.ClientKeyFile}
				if sc.Agent, err = ag.Load(); err != nil {
					return usageError{err}
				}
				if sc.Agent != nil {
					sc.Agent.Logger = logger
				}
				cfg.Server = &sc
			}
			// Map order does not matter: each flag is given once.
			for flag, v := range map[string]string{"--auth-key-file": fc.ClientKeyFile, "--tls-ca": fc.ClientTLSCA, "--tls-pin": fc.ClientTLSPin} {
				if v != "" {
					cfg.ClientArgs = append(cfg.ClientArgs, flag+"="+v)
				}
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
