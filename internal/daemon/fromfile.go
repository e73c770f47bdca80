package daemon

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
)

// FromFile is the daemon's configuration from its file fc (read from
// path), with the archive dsn and the logger: the API and its token, the
// test server (unless port is 0) with its keys, TLS and agent role, and
// the key and TLS flags of the tests it runs as a client. Its errors are
// the file's, fixed there.
func FromFile(path string, fc *FileConfig, dsn string, logger *slog.Logger) (Config, error) {
	cfg := Config{Host: fc.Host, DSN: dsn, API: fc.Listen, ReadsNeedToken: fc.ReadsNeedToken,
		Grace: Duration(fc.Grace, 0), Horizon: Duration(fc.Horizon, 0), PlanEvery: Duration(fc.PlanEvery, 0),
		Workers: fc.Workers, SpoolDir: fc.SpoolDir, Logger: logger,
		NoQueueMaintenance: fc.QueueMaintenance != nil && !*fc.QueueMaintenance}
	if cfg.API == "" {
		cfg.API = DefaultAPI
	}
	var err error
	if fc.TokenFile != "" {
		if cfg.Token, err = ReadToken(fc.TokenFile); err != nil {
			return Config{}, err
		}
	} else if cfg.ReadsNeedToken {
		return Config{}, fmt.Errorf("%s: reads_need_token needs token_file", path)
	}
	port := spec.DefaultPort
	if fc.Port != nil {
		port = *fc.Port
	}
	if port != 0 {
		sc := server.Config{Bind: fc.Bind, Port: port, Limits: server.DefaultLimits(), ShutdownGrace: 5 * time.Second, Logger: logger}
		sec := authflags.Server{KeyFile: fc.AuthKeyFile, Iperf3Open: fc.Iperf3Open, Allow: fc.Allow, Deny: fc.Deny, TLSCert: fc.TLSCert, TLSKey: fc.TLSKey}
		if sc.Keys, sc.ACL, sc.TLS, err = sec.Load(); err != nil {
			return Config{}, fmt.Errorf("%s: %v", path, err)
		}
		sc.Iperf3Open = fc.Iperf3Open
		ag := authflags.Agent{On: fc.AgentKeyFile != "", KeyFile: fc.AgentKeyFile, ClientKeyFile: fc.ClientKeyFile}
		if sc.Agent, err = ag.Load(); err != nil {
			return Config{}, err
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
	return cfg, nil
}
