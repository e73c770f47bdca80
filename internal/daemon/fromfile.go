package daemon

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/wireperf/wireperf/internal/auth/authflags"
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
		// The server's flags make the server, with the file's values: the
		// same checks and files read as `wireperf server`'s.
		sf, err := fc.serverFlags()
		if err != nil {
			return Config{}, fmt.Errorf("%s: %v", path, err)
		}
		sf.Config.Bind, sf.Config.Port, sf.Config.ShutdownGrace = fc.Bind, port, 5*time.Second
		sf.Auth = authflags.Server{KeyFile: fc.AuthKeyFile, Iperf3Open: fc.Iperf3Open, Allow: fc.Allow, Deny: fc.Deny, TLSCert: fc.TLSCert, TLSKey: fc.TLSKey}
		sf.Agent = authflags.Agent{On: fc.AgentKeyFile != "", KeyFile: fc.AgentKeyFile, ClientKeyFile: fc.ClientKeyFile}
		if err := sf.Finish(); err != nil {
			return Config{}, fmt.Errorf("%s: %s", path, serverKeyNames.Replace(err.Error()))
		}
		sc := sf.Config
		sc.Logger = logger
		if sc.Agent != nil {
			sc.Agent.Logger = logger
		}
		cfg.Server = &sc
	}
	for i, c := range fc.Iperf3Credentials {
		l, err := c.load()
		if err != nil {
			return Config{}, fmt.Errorf("%s: iperf3_credentials[%d]: %v", path, i, err)
		}
		cfg.Iperf3Logins = append(cfg.Iperf3Logins, *l)
	}
	// Map order does not matter: each flag is given once.
	for flag, v := range map[string]string{"--auth-key-file": fc.ClientKeyFile, "--tls-ca": fc.ClientTLSCA, "--tls-pin": fc.ClientTLSPin} {
		if v != "" {
			cfg.ClientArgs = append(cfg.ClientArgs, flag+"="+v)
		}
	}
	return cfg, nil
}
