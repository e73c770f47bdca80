package daemon

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// FileConfig is the daemon's configuration file.
type FileConfig struct {
	Host string `yaml:"host"` // this host's name in the mesh
	DB   string `yaml:"db"`   // the archive; --db overrides it
	// Listen is the HTTP API's address (default 127.0.0.1:5280).
	Listen string `yaml:"listen"`
	// Port and Bind are the test server's; port 0 runs no server.
	Port *int   `yaml:"port"`
	Bind string `yaml:"bind"`
	// TokenFile holds the bearer token API writes need (and reads, with
	// ReadsNeedToken). No token: the API refuses every write.
	TokenFile      string `yaml:"token_file"`
	ReadsNeedToken bool   `yaml:"reads_need_token"`
	// AgentKeyFile, when set, has the server take the agent role.
	AgentKeyFile string `yaml:"agent_key_file"`
	// ClientKeyFile is the key the agent proves to receivers that
	// require one (as server --client-key-file).
	ClientKeyFile string `yaml:"client_key_file"`
	// The test server's admission, as wireperf server's flags of the
	// same names: keys clients must prove, whether iperf3 clients are
	// still admitted, address lists, and TLS on control connections.
	AuthKeyFile string   `yaml:"auth_key_file"`
	Iperf3Open  bool     `yaml:"iperf3_open"`
	Allow       []string `yaml:"allow"`
	Deny        []string `yaml:"deny"`
	TLSCert     string   `yaml:"tls_cert"`
	TLSKey      string   `yaml:"tls_key"`
	// How this host's scheduled tests trust the other hosts' servers
	// when those use TLS: a CA file or a certificate's SHA-256 (the
	// client's --tls-ca and --tls-pin). ClientKeyFile above is the key
	// they prove.
	ClientTLSCA  string `yaml:"client_tls_ca"`
	ClientTLSPin string `yaml:"client_tls_pin"`
	// Grace is how long a running test may go on after SIGTERM before it
	// is stopped and recorded aborted (default 30s).
	Grace string `yaml:"grace"`
	// Horizon is how far ahead runs are planned (default 10m).
	Horizon string `yaml:"horizon"`
	// PlanEvery is how often this host plans its tasks (default 30s).
	PlanEvery string `yaml:"plan_every"`
	// Workers bounds this host's runs at once (default 4).
	Workers int `yaml:"workers"`
	// QueueMaintenance false keeps this daemon out of River's leader
	// election and its maintenance (default true; in a mesh of hundreds
	// of hosts, keep it on a few).
	QueueMaintenance *bool `yaml:"queue_maintenance"`
	// SpoolDir keeps results of runs that ended while the archive was
	// unreachable (default ~/.local/state/wireperf/spool-HOST).
	SpoolDir string `yaml:"spool_dir"`
	Log      string `yaml:"log"`      // "text" or "json"
	LogFile  string `yaml:"log_file"` // default stderr
}

// ConfigLimits are the configuration file's limits, far over any real
// configuration (its longest lists are allow and deny).
var ConfigLimits = yamlfile.Limits{Bytes: 1 << 20, Nodes: 100000, ValueLen: 4096, Depth: 16}

// ReadConfig reads a configuration file. Its mistakes are
// *yamlfile.Error values naming the line and column of the key or value
// they are about (several at once as yamlfile.Errors), an unknown key
// with the keys the file may have.
func ReadConfig(path string) (*FileConfig, error) {
	doc, err := yamlfile.ReadFile(path, ConfigLimits)
	if err != nil {
		return nil, err
	}
	var fc FileConfig
	if err := doc.Decode(&fc); err != nil { // an empty file is an empty configuration
		return nil, err
	}
	if fc.Host == "" {
		return nil, doc.Errorf(doc.Top("host"), "host", "missing (this host's name in the mesh)")
	}
	for _, f := range []struct{ key, v string }{{"grace", fc.Grace}, {"horizon", fc.Horizon}, {"plan_every", fc.PlanEvery}} {
		if f.v == "" {
			continue
		}
		if d, err := time.ParseDuration(f.v); err != nil || d <= 0 {
			return nil, doc.Errorf(doc.Top(f.key), f.key, "%q: want a duration such as 30s", f.v)
		}
	}
	if fc.Port != nil && (*fc.Port < 0 || *fc.Port > 65535) {
		return nil, doc.Errorf(doc.Top("port"), "port", "%d: want 0 to 65535", *fc.Port)
	}
	if fc.Workers < 0 {
		return nil, doc.Errorf(doc.Top("workers"), "workers", "negative")
	}
	return &fc, nil
}

// Duration reads one of the file's durations, or def when not set.
func Duration(v string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	return def
}

// ReadToken reads a bearer token from a file: its first line, trimmed.
// The file must be readable by its owner only, as key files must: the
// token lets its holder change every daemon's schedule.
func ReadToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if runtime.GOOS != "windows" {
		st, err := f.Stat()
		if err != nil {
			return "", err
		}
		if st.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s: readable by others (mode %04o); chmod 600 it", path, st.Mode().Perm())
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	tok, _, _ := strings.Cut(string(data), "\n")
	tok = strings.TrimSpace(tok)
	if err := auth.CheckKeyStrength(tok); err != nil {
		return "", fmt.Errorf("%s: weak token: %v", path, err)
	}
	return tok, nil
}
