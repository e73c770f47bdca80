package daemon_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/daemon"
)

// A token file others can read is refused, as key files are.
func TestReadTokenWantsPrivateFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not Unix's here")
	}
	f := filepath.Join(t.TempDir(), "token")
	os.WriteFile(f, []byte("4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"), 0o644)
	if _, err := daemon.ReadToken(f); err == nil || !strings.Contains(err.Error(), "readable by others (mode 0644)") {
		t.Fatalf("mode 0644: %v", err)
	}
	os.Chmod(f, 0o600)
	if tok, err := daemon.ReadToken(f); err != nil || tok != "4c1f0b3e8a9d27f65e0c1a7b93d4f2e8" {
		t.Fatalf("mode 0600: %q %v", tok, err)
	}
	os.WriteFile(f, []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"), 0o600)
	if _, err := daemon.ReadToken(f); err == nil || !strings.Contains(err.Error(), "weak token") {
		t.Fatalf("a weak token: %v", err)
	}
}

// The test server's admission comes from the configuration, with the
// keys wireperf server's flags have.
func TestReadConfigServerAdmission(t *testing.T) {
	f := filepath.Join(t.TempDir(), "daemon.yaml")
	os.WriteFile(f, []byte("host: a\nauth_key_file: /etc/wireperf/keys\niperf3_open: true\nallow: [10.0.0.0/8]\ndeny: [10.9.0.0/16]\ntls_cert: c.pem\ntls_key: k.pem\nclient_key_file: /etc/wireperf/client.key\nclient_tls_pin: ab12\n"), 0o600)
	fc, err := daemon.ReadConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	if fc.AuthKeyFile != "/etc/wireperf/keys" || !fc.Iperf3Open || len(fc.Allow) != 1 || fc.Deny[0] != "10.9.0.0/16" || fc.TLSCert != "c.pem" || fc.TLSKey != "k.pem" || fc.ClientTLSPin != "ab12" {
		t.Fatalf("%+v", fc)
	}
}

// A bad configuration is one line, each problem at FILE:LINE:COLUMN once
// (FILE:LINE where the YAML parser says a line only): an unknown key
// names the keys the file may have, not the Go type.
func TestReadConfigErrorsOneLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, want string }{
		{"host: a\ndb: x.db\nport: 1\nbogus_key: 2\n", `daemon.yaml:4:1: unknown key "bogus_key" (known: host, db, listen, port, bind, `},
		{"host: a\nport: abc\nworkers: [1]\n", "daemon.yaml:2:7: port: cannot unmarshal !!str `abc` into int; " + filepath.Join(dir, "daemon.yaml") + ":3:10: workers: cannot unmarshal !!seq into int"},
		{"host: a\nport: 70000\n", "daemon.yaml:2:7: port: 70000: want 0 to 65535"},
		{"host: a\ngrace: soon\n", `daemon.yaml:2:8: grace: "soon": want a duration such as 30s`},
		{"db: x.db\n", "daemon.yaml: host: missing"},
		{"host: a\n  port: 1\n", "daemon.yaml:2: mapping values are not allowed in this context"},
	} {
		f := filepath.Join(dir, "daemon.yaml")
		if err := os.WriteFile(f, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := daemon.ReadConfig(f)
		if err == nil || !strings.HasPrefix(err.Error(), f+":") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %s…", c.text, err, c.want)
			continue
		}
		for _, bad := range []string{"\n", "line ", "unmarshal errors", "daemon.FileConfig", ": yaml: "} {
			if strings.Contains(err.Error(), bad) {
				t.Errorf("%q: error %q says %q", c.text, err, bad)
			}
		}
	}
}

// commentedKey is a line "#key: value" (or "# key: value").
var commentedKey = regexp.MustCompile(`^# ?([a-z_]+: .*)$`)

// The packaged example configuration reads as it is, and with its
// commented keys given too: every key it shows is one the file takes.
func TestPackagedExampleConfigReads(t *testing.T) {
	data, err := os.ReadFile("../../packaging/etc/daemon.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	var uncommented []string
	for _, line := range strings.Split(string(data), "\n") {
		if m := commentedKey.FindStringSubmatch(line); m != nil {
			line = m[1]
		}
		uncommented = append(uncommented, line)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"as shipped": string(data), "uncommented": strings.Join(uncommented, "\n")} {
		f := filepath.Join(dir, "daemon.yaml")
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		fc, err := daemon.ReadConfig(f)
		if err != nil || fc.Host != "CHANGE-ME" {
			t.Errorf("%s: %+v %v", name, fc, err)
		}
		if name == "uncommented" && (fc == nil || fc.TokenFile == "" || fc.SpoolDir == "") {
			t.Errorf("the commented keys were not read: %+v", fc)
		}
	}
}
