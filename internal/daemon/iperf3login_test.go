package daemon_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
	"github.com/wireperf/wireperf/internal/units"
)

var (
	rsaKeyOnce sync.Once
	rsaKey     *rsa.PrivateKey
)

// iperf3Files writes an RSA key pair (PKCS#8 and PKIX PEM, as openssl
// writes them), a users file with lines, in iperf3's format, and a
// password file holding password, all mode 600, into dir.
func iperf3Files(t *testing.T, dir, password string, lines ...string) (priv, pub, users, pwFile string) {
	t.Helper()
	rsaKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		rsaKey = k
	})
	p8, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, users, pwFile = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem"), filepath.Join(dir, "users.csv"), filepath.Join(dir, "password")
	for name, b := range map[string][]byte{
		priv: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}), pub: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}),
		users: []byte(strings.Join(lines, "\n") + "\n"), pwFile: []byte(password + "\n"),
	} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return priv, pub, users, pwFile
}

// writeConfig writes a daemon.yaml of text into dir.
func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	f := filepath.Join(dir, "daemon.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// The server's caps and iperf3's authentication are keys named as
// wireperf server's flags, read by the flags' own parsers; the
// credentials of this host's tests are read and checked as the client's
// --username is.
func TestReadConfigCapsAndIperf3Auth(t *testing.T) {
	dir := t.TempDir()
	priv, pub, users, pw := iperf3Files(t, dir, "rossi", iperf3.UsersLine("mario", "rossi"))
	f := writeConfig(t, dir, "host: a\nbind: 127.0.0.1\n"+
		"server_bitrate_limit: 10m/2\nserver_total_bitrate_limit: 1g\nclient_daily_bytes: 50G\nserver_max_duration: 3600\n"+
		"rsa_private_key_path: "+priv+"\nauthorized_users_path: "+users+"\ntime_skew_threshold: 30\nuse_pkcs1_padding: true\n"+
		"iperf3_credentials:\n  - {host: Speedtest.Example.NET, username: mario, rsa_public_key_path: "+pub+", password_file: "+pw+"}\n"+
		"  - {host: 192.0.2.7, username: luigi, rsa_public_key_path: "+pub+", password_file: "+pw+", use_pkcs1_padding: true}\n")
	fc, err := daemon.ReadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.FromFile(f, fc, "x.db", quiet())
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Server.Limits
	daily, _ := units.ParseSize("50G")
	if l.BitrateLimit != 10e6 || l.BitrateWindow != 2*time.Second || l.TotalBitrateLimit != 1e9 || l.TotalBitrateWindow != server.DefaultBitrateWindow ||
		l.ClientDailyBytes != daily || l.MaxDuration != time.Hour {
		t.Errorf("limits %+v", l)
	}
	if a := cfg.Server.Iperf3Auth; a == nil || a.UsersPath != users || a.Skew != 30*time.Second || !a.PKCS1 || a.Key == nil {
		t.Errorf("iperf3's authentication %+v", a)
	}
	if len(cfg.Iperf3Logins) != 2 {
		t.Fatalf("logins %v", cfg.Iperf3Logins)
	}
	first, second := cfg.Iperf3Logins[0], cfg.Iperf3Logins[1]
	if first.Host != "speedtest.example.net" || first.Cred.User != "mario" || first.Cred.Password != "rossi" || first.Cred.PKCS1 || first.PublicKeyPath != pub {
		t.Errorf("first login %+v", first)
	}
	if second.Host != "192.0.2.7" || second.Cred.User != "luigi" || !second.Cred.PKCS1 {
		t.Errorf("second login %+v", second)
	}
	if s := strings.Join([]string{first.Cred.String(), first.Cred.GoString()}, " "); strings.Contains(s, "rossi") {
		t.Errorf("a login shows its password: %s", s)
	}
	// Without them the server is as it was: no caps, no iperf3 keys.
	f = writeConfig(t, dir, "host: a\nbind: 127.0.0.1\n")
	fc, _ = daemon.ReadConfig(f)
	if cfg, err = daemon.FromFile(f, fc, "x.db", quiet()); err != nil || cfg.Server.Iperf3Auth != nil ||
		cfg.Server.Limits != server.DefaultLimits() || cfg.Iperf3Logins != nil {
		t.Errorf("a configuration without the keys: %+v %v", cfg.Server, err)
	}
}

// Each bad value is one line at the key's line and column, naming it,
// with what its flag says of it.
func TestReadConfigBadCapsAndIperf3Keys(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"server_bitrate_limit: fast\n", `daemon.yaml:2:23: server_bitrate_limit: invalid rate "fast"`},
		{"server_bitrate_limit: 10m/0\n", `daemon.yaml:2:23: server_bitrate_limit: "10m/0": averaging window "0": want more than 0`},
		{"server_bitrate_limit: 10m/-1\n", `daemon.yaml:2:23: server_bitrate_limit: "10m/-1": invalid duration "-1": must not be negative`},
		{"server_total_bitrate_limit: -5m\n", `daemon.yaml:2:29: server_total_bitrate_limit: invalid rate "-5m": must not be negative`},
		{"client_daily_bytes: 5x\n", `daemon.yaml:2:21: client_daily_bytes: invalid size "5x"`},
		{"server_max_duration: soon\n", `daemon.yaml:2:22: server_max_duration: invalid duration "soon"`},
		{"time_skew_threshold: 0\n", `daemon.yaml:2:22: time_skew_threshold: "0": want whole seconds, more than 0`},
		{"server_max_duration: false\n", `daemon.yaml:2:22: server_max_duration: invalid duration "false"`},
		{"time_skew_threshold: 1.5\n", `time_skew_threshold: "1.5": want whole seconds`},
		{"use_pkcs1_padding: maybe\n", "daemon.yaml:2:20: use_pkcs1_padding: cannot unmarshal !!str `maybe` into bool"},
		{"iperf3_credentials: [{host: b.example, username: u}, {host: B.example, username: v}]\n", `daemon.yaml:2:54: iperf3_credentials[1]: host: "B.example" has an entry above already`},
		{"iperf3_credentials: [{host: 'b:5201'}]\n", `daemon.yaml:2:22: iperf3_credentials[0]: host: "b:5201": want a host name or an address, without a port`},
		{"iperf3_credentials: [{username: u}]\n", `iperf3_credentials[0]: host: missing`},
		{"iperf3_credentials: [{host: b, password: x}]\n", `iperf3_credentials[0]: unknown key "password" (known: host, username, rsa_public_key_path, password_file, use_pkcs1_padding)`},
	} {
		f := writeConfig(t, dir, "host: a\n"+c.text)
		_, err := daemon.ReadConfig(f)
		if err == nil || !strings.HasPrefix(err.Error(), f+":") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %s", c.text, err, c.want)
		}
	}
}

// What only the files tell (a key that doesn't read, a password file
// others can read, keys that go together) fails FromFile in one line
// naming the keys, and never shows the password.
func TestFromFileRefusesIperf3Files(t *testing.T) {
	dir := t.TempDir()
	const password = "s3cr3t-Passw0rd"
	priv, pub, users, pw := iperf3Files(t, dir, password, iperf3.UsersLine("mario", password))
	open := filepath.Join(dir, "open-password")
	if err := os.WriteFile(open, []byte(password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spaced := filepath.Join(dir, "spaced-password")
	if err := os.WriteFile(spaced, []byte(password+" more\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cred := func(fields string) string { return "iperf3_credentials:\n  - {host: b, " + fields + "}\n" }
	for _, c := range []struct{ text, want string }{
		{"rsa_private_key_path: " + priv + "\n", "rsa_private_key_path and authorized_users_path go together"},
		{"rsa_private_key_path: " + pub + "\nauthorized_users_path: " + users + "\n", "rsa_private_key_path: "},
		{"rsa_private_key_path: " + priv + "\nauthorized_users_path: " + filepath.Join(dir, "none") + "\n", "authorized_users_path: "},
		{"allow: [10.0.0.0/33]\n", "allow: "},
		{cred("username: mario, rsa_public_key_path: " + pub + ", password_file: " + open), "iperf3_credentials[0]: password_file: " + open + " is readable by others (mode 0644); chmod 600 it"},
		{cred("username: mario, rsa_public_key_path: " + pub), "iperf3_credentials[0]: password_file: missing"},
		{cred("username: mario, rsa_public_key_path: " + priv + ", password_file: " + pw), "iperf3_credentials[0]: rsa_public_key_path: "},
		{cred("rsa_public_key_path: " + pub + ", password_file: " + pw), "iperf3_credentials[0]: username and rsa_public_key_path go together"},
		{cred("username: mario, rsa_public_key_path: " + pub + ", password_file: " + spaced), "iperf3_credentials[0]: username: the password must be one word"},
		{cred("username: 'mario,x', rsa_public_key_path: " + pub + ", password_file: " + pw), "iperf3_credentials[0]: username: the user name must be one word"},
	} {
		f := writeConfig(t, dir, "host: a\nbind: 127.0.0.1\n"+c.text)
		fc, err := daemon.ReadConfig(f)
		if err != nil {
			t.Errorf("%q: ReadConfig: %v", c.text, err)
			continue
		}
		_, err = daemon.FromFile(f, fc, "x.db", quiet())
		if err == nil || !strings.HasPrefix(err.Error(), f+": ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", c.text, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), password) || strings.Contains(err.Error(), "--")) {
			t.Errorf("%q: the error shows the password or a flag's name: %v", c.text, err)
		}
	}
}

// iperf3's credentials are capabilities: a task's test line may not
// carry them, from the API or a mesh file, nor a row stored past the
// checks.
func TestIperf3CredentialsNotFromTestLines(t *testing.T) {
	c := apiDaemon(t)
	for _, flag := range []string{"--username mario", "--rsa-public-key-path /etc/wireperf/iperf3.pub", "--use-pkcs1-padding"} {
		name := strings.Fields(flag)[0]
		code, _, out := c.do("POST", "/api/tasks", `{"name":"x","source":"a","dest":"b","test":"client --iperf3 `+flag+`"}`)
		var e struct{ Error string }
		if code != http.StatusBadRequest || json.Unmarshal([]byte(out), &e) != nil || !strings.Contains(e.Error, name+": iperf3's credentials") {
			t.Errorf("a task with %s: %d %s, want a 400 naming it", flag, code, out)
		}
		mesh := "hosts: {a: , b: }\ngroups: {g: {mesh: [a, b]}}\ntests:\n  t: {test: client " + flag + "}\nschedules:\n  - {group: g, test: t, repeat: 1m}\n"
		if code, _, out := c.do("POST", "/api/schedule", mesh); code != http.StatusBadRequest || !strings.Contains(out, name) {
			t.Errorf("a mesh with %s: %d %s, want a 400 naming it", flag, code, out)
		}
		tk := &schedule.Task{Dest: "b", Args: append([]string{"client"}, strings.Fields(flag)...)}
		if _, err := daemon.TestArgs(tk, nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("a stored row with %s: %v", flag, err)
		}
	}
	if code, _, out := c.do("GET", "/api/tasks", ""); code != http.StatusOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("something was stored: %d %s", code, out)
	}
}

// fileDaemon is a daemon made from the configuration text as `wireperf
// daemon --config` makes it, its server (if any) on a free loopback
// port, and its log in logs.
func fileDaemon(t *testing.T, dir, text string, logs *syncbuf.Buffer) *daemon.Daemon {
	t.Helper()
	f := writeConfig(t, dir, text)
	fc, err := daemon.ReadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg, err := daemon.FromFile(f, fc, archivetest.Backends(t)["sqlite"], logger)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Env, cfg.SpoolDir, cfg.API = []string{envCLI + "=1"}, t.TempDir(), ""
	cfg.Grace, cfg.PlanEvery, cfg.Horizon = 5*time.Second, time.Second, time.Minute
	if cfg.Server != nil {
		cfg.Server.Port = 0
	}
	d, err := daemon.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// iperf3Older says whether the iperf3 at path is older than
// major.minor (its --version's first line, "iperf 3.21 ...").
func iperf3Older(t *testing.T, path string, major, minor int) bool {
	t.Helper()
	out, err := exec.Command(path, "--version").Output()
	m := regexp.MustCompile(`iperf (\d+)\.(\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("%s --version: %v %q", path, err, out)
	}
	t.Logf("%s is iperf %s.%s", path, m[1], m[2])
	maj, _ := strconv.Atoi(string(m[1]))
	mnr, _ := strconv.Atoi(string(m[2]))
	return maj < major || (maj == major && mnr < minor)
}

// The daemon's server, configured with iperf3's authentication, admits
// iperf3's own client with the right password and refuses a wrong one
// with iperf3's "test authorization failed"; its log never shows either
// password.
func TestDaemonServerAdmitsIperf3Credentials(t *testing.T) {
	t.Parallel()
	bin := iperf3bin.Need(t)
	dir := t.TempDir()
	const password, wrong = "rossi-7f3a", "luigi-9b2c"
	priv, pub, users, _ := iperf3Files(t, dir, password, iperf3.UsersLine("mario", password))
	text := "host: a\nbind: 127.0.0.1\nrsa_private_key_path: " + priv + "\nauthorized_users_path: " + users + "\n"
	// iperf3 before 3.17 pads with PKCS#1 v1.5 only (3.21 with OAEP):
	// the server is told so, as iperf3's would be.
	if iperf3Older(t, bin, 3, 17) {
		text += "use_pkcs1_padding: true\n"
	}
	var logs syncbuf.Buffer
	d := fileDaemon(t, dir, text, &logs)
	stop := start(t, d)
	defer stop()
	run := func(pw string) map[string]any {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-c", "127.0.0.1", "-p", strconv.Itoa(d.ServerPort()), "-t", "1", "-J",
			"--username", "mario", "--rsa-public-key-path", pub)
		cmd.Env = append(os.Environ(), "IPERF3_PASSWORD="+pw)
		out, _ := cmd.Output() // a refused test exits 1, with its JSON
		var doc map[string]any
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("iperf3's -J: %v\n%s", err, out)
		}
		return doc
	}
	doc := run(password)
	if e, ok := doc["error"]; ok {
		t.Fatalf("the right password: iperf3 says %v", e)
	}
	end, _ := doc["end"].(map[string]any)
	recv, _ := end["sum_received"].(map[string]any)
	if b, _ := recv["bytes"].(float64); b <= 0 {
		t.Errorf("the right password: the test moved no bytes: %v", end)
	}
	if e, _ := run(wrong)["error"].(string); e != "test authorization failed" {
		t.Errorf("a wrong password: iperf3's error %q, want \"test authorization failed\"", e)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); strings.Contains(l, password) || strings.Contains(l, wrong) {
		t.Errorf("the daemon's log shows a password:\n%s", l)
	}
}

// A daemon's scheduled test reaches an iperf3-speaking server that
// requires iperf3's authentication with its configuration's credential
// for that host; with a wrong password the run fails with iperf3's
// reason. Neither the run's record, its command line nor the daemon's
// log shows the password.
func TestScheduledTestUsesIperf3Credential(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const password = "rossi-7f3a"
	priv, pub, users, pw := iperf3Files(t, dir, password, iperf3.UsersLine("mario", password))
	wrong := filepath.Join(dir, "wrong-password")
	const wrongPassword = "luigi-9b2c"
	if err := os.WriteFile(wrong, []byte(wrongPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The server: a daemon of its own, with iperf3's authentication.
	var serverLogs syncbuf.Buffer
	srv := fileDaemon(t, t.TempDir(), "host: s\nbind: 127.0.0.1\nrsa_private_key_path: "+priv+"\nauthorized_users_path: "+users+"\n", &serverLogs)
	stopServer := start(t, srv)
	defer stopServer()
	// The key and TLS trust between wireperf hosts are not given to a
	// test of a host with iperf3's credentials: with them the client
	// would refuse to test an iperf3 server.
	secret := make([]byte, 16)
	rand.Read(secret)
	keyFile := filepath.Join(dir, "client.key")
	if err := os.WriteFile(keyFile, []byte("a "+hex.EncodeToString(secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		ok         bool
	}{{"right password", pw, true}, {"wrong password", wrong, false}} {
		t.Run(c.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			d := fileDaemon(t, t.TempDir(), "host: a\nport: 0\nclient_key_file: "+keyFile+"\nclient_tls_pin: "+strings.Repeat("ab", 32)+"\n"+
				"iperf3_credentials:\n  - {host: 127.0.0.1, username: mario, rsa_public_key_path: "+pub+", password_file: "+c.file+"}\n", &logs)
			defer d.CloseQueue()
			defer d.Store().Close()
			ctx := context.Background()
			tk := loopTask("auth", "a", "s", srv.ServerPort(), 1, 0, 5*time.Second, 1)
			tk.Args = []string{"client", "--iperf3", "-t", "1"}
			id, r := runFirst(t, ctx, d, tk)
			rec, err := d.Store().Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.ok {
				if r.State != archive.StateFinished || rec.Summary.ReceivedBps == nil || *rec.Summary.ReceivedBps <= 0 {
					t.Fatalf("the run: %s (%q), goodput %v; want finished with bytes moved", r.State, r.Reason, rec.Summary.ReceivedBps)
				}
			} else if r.State != archive.StateFailed || !strings.Contains(r.Reason, "test authorization failed") {
				t.Fatalf("the run: %s (%q); want failed with iperf3's \"test authorization failed\"", r.State, r.Reason)
			}
			if want := "wireperf client --iperf3 --time=1 --port=" + strconv.Itoa(srv.ServerPort()) + " --json -- 127.0.0.1"; rec.Cmdline != want {
				t.Errorf("command line %q, want %q (the credential's flags are this host's)", rec.Cmdline, want)
			}
			for what, s := range map[string]string{"reason": r.Reason, "command line": rec.Cmdline, "document": string(rec.Document), "log": logs.String()} {
				if strings.Contains(s, password) || strings.Contains(s, wrongPassword) {
					t.Errorf("the run's %s shows the password: %s", what, s)
				}
			}
		})
	}
	if err := stopServer(); err != nil {
		t.Fatal(err)
	}
	if l := serverLogs.String(); strings.Contains(l, password) || strings.Contains(l, wrongPassword) {
		t.Errorf("the server's log shows a password:\n%s", l)
	}
}

// The daemon's server_bitrate_limit is the server's
// --server-bitrate-limit: an unlimited TCP test far over 10 Mbit/s is
// ended with iperf3's reason; a 2 Mbit/s UDP test runs whole.
func TestDaemonServerBitrateLimit(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	d := fileDaemon(t, t.TempDir(), "host: a\nbind: 127.0.0.1\nserver_bitrate_limit: 10m/0.3\n", &logs)
	stop := start(t, d)
	defer stop()
	run := func(s spec.Spec) error {
		res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: "127.0.0.1", Port: d.ServerPort(), ConnectTimeout: 5 * time.Second, Spec: s}})
		if err == nil && res.Error != "" {
			return errors.New(res.Error)
		}
		return err
	}
	over := spec.Default()
	over.Duration, over.Interval, over.Streams = 3*time.Second, 0, 2
	if err := run(over); err == nil || !strings.Contains(err.Error(), "total required bandwidth is larger than server limit") {
		t.Errorf("an unlimited TCP test against a 10 Mbit/s limit: err %v, want iperf3's reason", err)
	}
	under := spec.Default()
	under.Protocol, under.Rate, under.Length = spec.UDP, 2e6, 1200
	under.Duration, under.Interval = time.Second, 0
	if err := run(under); err != nil {
		t.Errorf("a 2 Mbit/s UDP test under a 10 Mbit/s limit: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
