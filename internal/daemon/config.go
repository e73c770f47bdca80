package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/auth"
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

// ReadConfig reads a configuration file. Errors carry the file and the
// line of the key they are about.
func ReadConfig(path string) (*FileConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var fc FileConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) { // an empty file is an empty configuration
		return nil, configError(path, err)
	}
	if fc.Host == "" {
		return nil, fmt.Errorf("%s: host: missing (this host's name in the mesh)", path)
	}
	for key, v := range map[string]string{"grace": fc.Grace, "horizon": fc.Horizon, "plan_every": fc.PlanEvery} {
		if v == "" {
			continue
		}
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return nil, fmt.Errorf("%s: %s: %q: want a duration such as 30s", path, key, v)
		}
	}
	if fc.Port != nil && (*fc.Port < 0 || *fc.Port > 65535) {
		return nil, fmt.Errorf("%s: port: %d: want 0 to 65535", path, *fc.Port)
	}
	if fc.Workers < 0 {
		return nil, fmt.Errorf("%s: workers: negative", path)
	}
	return &fc, nil
}

// configError says in one line what the YAML decoder found wrong with
// the file: each problem as FILE:LINE: what, an unknown key with the keys
// the file may have.
func configError(path string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s", atLine(path, strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	problems := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		problems[i] = atLine(path, e)
	}
	return errors.New(strings.Join(problems, "; "))
}

// atLine turns the decoder's "line N: what" into "FILE:N: what", and its
// "field K not found in type T" into the key and the keys known.
func atLine(path, msg string) string {
	msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
	where := path
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ":"); ok {
			if _, err := strconv.Atoi(num); err == nil {
				where, msg = path+":"+num, strings.TrimSpace(after)
			}
		}
	}
	if key, ok := strings.CutPrefix(msg, "field "); ok {
		if key, _, ok := strings.Cut(key, " not found in type "); ok {
			msg = fmt.Sprintf("unknown key %q (want one of: %s)", key, strings.Join(configKeys(), ", "))
		}
	}
	return where + ": " + msg
}

// configKeys are the keys FileConfig reads, in its order.
func configKeys() []string {
	t := reflect.TypeFor[FileConfig]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys = append(keys, k)
		}
	}
	return keys
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
