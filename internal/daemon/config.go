package daemon

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/server/serverflags"
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
	// The test server's caps and iperf3's authentication of iperf3
	// clients: each key is one of wireperf server's flags, its name in
	// snake case, and its value is read by the flag's own parser
	// (serverFlags).
	ServerBitrateLimit      string `yaml:"server_bitrate_limit"`
	ServerTotalBitrateLimit string `yaml:"server_total_bitrate_limit"`
	ClientDailyBytes        string `yaml:"client_daily_bytes"`
	ServerMaxDuration       string `yaml:"server_max_duration"`
	RSAPrivateKeyPath       string `yaml:"rsa_private_key_path"`
	AuthorizedUsersPath     string `yaml:"authorized_users_path"`
	TimeSkewThreshold       string `yaml:"time_skew_threshold"`
	UsePKCS1Padding         bool   `yaml:"use_pkcs1_padding"`
	// How this host's scheduled tests trust the other hosts' servers
	// when those use TLS: a CA file or a certificate's SHA-256 (the
	// client's --tls-ca and --tls-pin). ClientKeyFile above is the key
	// they prove.
	ClientTLSCA  string `yaml:"client_tls_ca"`
	ClientTLSPin string `yaml:"client_tls_pin"`
	// Iperf3Credentials are what this host's tests prove to iperf3
	// servers that require iperf3's authentication, one entry a server.
	Iperf3Credentials []Iperf3Credential `yaml:"iperf3_credentials"`
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
	if _, err := fc.serverFlags(); err != nil {
		var ke *keyError
		if errors.As(err, &ke) {
			return nil, doc.Errorf(doc.Top(ke.key), ke.key, "%s", ke.message())
		}
		return nil, err
	}
	hosts := map[string]bool{}
	for i, c := range fc.Iperf3Credentials {
		key := fmt.Sprintf("iperf3_credentials[%d]", i)
		var at *yaml.Node
		if list := doc.Top("iperf3_credentials"); list != nil && i < len(list.Content) {
			at = list.Content[i]
		}
		host, err := credentialHost(c.Host)
		if err != nil {
			return nil, doc.Errorf(at, key, "%v", err)
		}
		if hosts[host] {
			return nil, doc.Errorf(at, key, "host: %q has an entry above already", c.Host)
		}
		hosts[host] = true
	}
	return &fc, nil
}

// serverKeys are the configuration's keys that are wireperf server's
// flags, the flag's name in snake case, with their values.
func (fc *FileConfig) serverKeys() [][2]string {
	all := [][2]string{
		{"server_bitrate_limit", fc.ServerBitrateLimit}, {"server_total_bitrate_limit", fc.ServerTotalBitrateLimit},
		{"client_daily_bytes", fc.ClientDailyBytes}, {"server_max_duration", fc.ServerMaxDuration},
		{"rsa_private_key_path", fc.RSAPrivateKeyPath}, {"authorized_users_path", fc.AuthorizedUsersPath},
		{"time_skew_threshold", fc.TimeSkewThreshold},
	}
	set := all[:0]
	for _, kv := range all {
		if kv[1] != "" {
			set = append(set, kv)
		}
	}
	if fc.UsePKCS1Padding {
		set = append(set, [2]string{"use_pkcs1_padding", "true"})
	}
	return set
}

// keyError is a configuration key's value its flag refused.
type keyError struct {
	key, value string
	err        error
}

func (e *keyError) Error() string { return e.key + ": " + e.message() }

// message is the flag's error, with the value when it doesn't say it.
func (e *keyError) message() string {
	msg := e.err.Error()
	if !strings.Contains(msg, strconv.Quote(e.value)) {
		msg = strconv.Quote(e.value) + ": " + msg
	}
	return msg
}

// serverFlags are wireperf server's flags at their defaults with the
// configuration's serverKeys set, each by its flag's own parser (one
// place reads "10m/5" or "50G", the command line's and this file's).
// The caller sets the rest; Finish checks the whole.
func (fc *FileConfig) serverFlags() (*serverflags.Flags, error) {
	sf := serverflags.New()
	fs := pflag.NewFlagSet("daemon", pflag.ContinueOnError)
	sf.Register(fs) // sets each flag's default: the keys are set after it
	for _, kv := range fc.serverKeys() {
		if err := fs.Lookup(strings.ReplaceAll(kv[0], "_", "-")).Value.Set(kv[1]); err != nil {
			return nil, &keyError{key: kv[0], value: kv[1], err: err}
		}
	}
	return sf, nil
}

// serverKeyNames says the server flags' errors in the file's words: each
// flag the daemon's keys set becomes its key.
var serverKeyNames = func() *strings.Replacer {
	var pairs []string
	for _, key := range []string{"auth_key_file", "iperf3_open", "allow", "deny", "tls_cert", "tls_key", "agent_key_file", "client_key_file",
		"server_bitrate_limit", "server_total_bitrate_limit", "client_daily_bytes", "server_max_duration",
		"rsa_private_key_path", "authorized_users_path", "time_skew_threshold", "use_pkcs1_padding"} {
		pairs = append(pairs, "--"+strings.ReplaceAll(key, "_", "-"), key)
	}
	// agent_key_file turns the agent role on: after --agent-key-file, so
	// that the longer name is replaced whole.
	return strings.NewReplacer(append(pairs, "--agent", "agent_key_file")...)
}()

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
	f, err := auth.OpenPrivate(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
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
