package daemon_test

import (
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/spec"
)

// A configuration file becomes the daemon's configuration: the API's
// default address, a test server on the default port unless port is 0,
// and the client's key and TLS flags for the tests it runs.
func TestFromFile(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	fc := &daemon.FileConfig{Host: "a", Grace: "3s", ClientTLSCA: "/ca.pem", ClientTLSPin: "ab12"}
	cfg, err := daemon.FromFile("d.yaml", fc, "x.db", log)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "a" || cfg.DSN != "x.db" || cfg.API != daemon.DefaultAPI || cfg.Grace.String() != "3s" || cfg.Logger != log {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.Server == nil || cfg.Server.Port != spec.DefaultPort || cfg.Server.Keys != nil || cfg.Server.Agent != nil {
		t.Fatalf("server %+v", cfg.Server)
	}
	if cfg.NoQueueMaintenance {
		t.Fatal("queue_maintenance left out: the daemon stays out of River's maintenance, want in")
	}
	for _, keep := range []bool{true, false} {
		fc := &daemon.FileConfig{Host: "a", QueueMaintenance: &keep}
		if cfg, err := daemon.FromFile("d.yaml", fc, "x.db", log); err != nil || cfg.NoQueueMaintenance == keep {
			t.Fatalf("queue_maintenance: %v: NoQueueMaintenance %v, %v", keep, cfg.NoQueueMaintenance, err)
		}
	}
	slices.Sort(cfg.ClientArgs)
	if strings.Join(cfg.ClientArgs, " ") != "--tls-ca=/ca.pem --tls-pin=ab12" {
		t.Fatalf("client args %q", cfg.ClientArgs)
	}
	zero := 0
	fc = &daemon.FileConfig{Host: "a", Port: &zero, Listen: "127.0.0.1:9"}
	if cfg, err := daemon.FromFile("d.yaml", fc, "x.db", log); err != nil || cfg.Server != nil || cfg.API != "127.0.0.1:9" {
		t.Fatalf("port 0: %+v, %v; want no test server", cfg, err)
	}
}

func TestFromFileRefuses(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	if _, err := daemon.FromFile("d.yaml", &daemon.FileConfig{ReadsNeedToken: true}, "x.db", log); err == nil || err.Error() != "d.yaml: reads_need_token needs token_file" {
		t.Errorf("reads_need_token alone: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if _, err := daemon.FromFile("d.yaml", &daemon.FileConfig{TokenFile: missing}, "x.db", log); err == nil {
		t.Error("a missing token file is accepted")
	}
	if _, err := daemon.FromFile("d.yaml", &daemon.FileConfig{AuthKeyFile: missing}, "x.db", log); err == nil || !strings.HasPrefix(err.Error(), "d.yaml: ") {
		t.Errorf("a missing key file: %v, want an error naming the file", err)
	}
}

// The agent's client key file goes with the agent role.
func TestFromFileClientKeyNeedsAgent(t *testing.T) {
	_, err := daemon.FromFile("d.yaml", &daemon.FileConfig{ClientKeyFile: "/k"}, "x.db", slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "client_key_file needs agent_key_file") {
		t.Fatalf("client_key_file without agent_key_file: %v", err)
	}
}
