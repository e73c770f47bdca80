package cli

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/testutil/tlstest"
)

// Bad key files and certificates stop the server at once, with one line
// that names the problem and status 2.
func TestSecurityBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(p, mode)
		return p
	}
	open := write("open", "alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n", 0o644)
	empty := write("empty", "", 0o600)
	key := write("key", "alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n", 0o600)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-s", "-p", "0", "--auth-key-file", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"-s", "-p", "0", "--auth-key-file", empty}, "holds no key"},
		{[]string{"-s", "-p", "0", "--auth-key-file", open}, "readable by others"},
		{[]string{"-s", "-p", "0", "--tls-cert", filepath.Join(dir, "nosuch.crt"), "--tls-key", key}, "nosuch.crt"},
		{[]string{"-s", "-p", "0", "--tls-cert", key}, "--tls-cert and --tls-key go together"},
		{[]string{"-s", "-p", "0", "--allow", "10.0.0.0/33"}, "--allow"},
		{[]string{"-c", "127.0.0.1", "-p", "1", "--auth-key-file", open}, "readable by others"},
		{[]string{"-c", "127.0.0.1", "-p", "1", "--tls-pin", "abc"}, "--tls-pin"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tt.args, code, stderr, tt.want)
		}
	}
}

// With keys on the server, a client without the key or with the wrong
// one prints "authentication failed" and exits 1; with it, it runs.
func TestClientAuthentication(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keys, err := auth.LoadKeys(write("server", "alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"))
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(startServerWith(t, func(c *server.Config) { c.Keys = keys }))
	good := write("good", "alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n")
	bad := write("bad", "alice 9b2e7d4a1c6f08e35d7a2b9c4e1f6a03\n")
	for _, args := range [][]string{{}, {"--auth-key-file", bad}} {
		code, _, stderr := runCLI(append([]string{"-c", "127.0.0.1", "-p", port, "-t", "1"}, args...)...)
		if code != ExitFailed || !strings.Contains(stderr, "authentication failed") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and authentication failed", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "--auth-key-file", good); code != ExitOK {
		t.Errorf("with the key: exit %d: %s", code, stderr)
	}
}

// Every command that connects to a server takes the client's key and TLS
// flags, and one that connects to a keyed server with the key runs.
func TestEveryClientCommandTakesTheSecurityFlags(t *testing.T) {
	for _, cmd := range []string{"rr", "udpmon", "advise"} {
		for _, flag := range []string{"--auth-key-file", "--tls-ca", "--tls-pin"} {
			_, stdout, stderr := runCLI(cmd, "--help")
			if !strings.Contains(stdout+stderr, flag) {
				t.Errorf("%s has no %s", cmd, flag)
			}
		}
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(startServerWith(t, func(c *server.Config) { c.Keys = keys }))
	rr := []string{"rr", "127.0.0.1", "-p", port, "--count", "50"}
	if code, _, stderr := runCLI(rr...); code != ExitFailed || !strings.Contains(stderr, "authentication failed") {
		t.Errorf("rr without the key: exit %d, stderr %q; want 1 and authentication failed", code, stderr)
	}
	if code, stdout, stderr := runCLI(append(rr, "--auth-key-file", keyFile)...); code != ExitOK || !strings.Contains(stdout, "50 transactions in") {
		t.Errorf("rr with the key: exit %d: %s %s", code, stdout, stderr)
	}
}

// rr over TLS from the command line: the certificate pinned, the key
// proved inside TLS.
func TestRROverTLSWithAPin(t *testing.T) {
	cert, parsed := tlstest.SelfSigned(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(startServerWith(t, func(c *server.Config) {
		c.Keys = keys
		c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}))
	pin := fmt.Sprintf("%x", sha256.Sum256(parsed.Raw))
	code, stdout, stderr := runCLI("rr", "127.0.0.1", "-p", port, "--count", "50", "--tcp", "--auth-key-file", keyFile, "--tls-pin", pin)
	if code != ExitOK || !strings.Contains(stdout, "50 transactions in") {
		t.Fatalf("rr over TLS: exit %d: %s %s", code, stdout, stderr)
	}
	wrong := fmt.Sprintf("%x", sha256.Sum256([]byte("another certificate")))
	if code, _, stderr := runCLI("rr", "127.0.0.1", "-p", port, "--count", "50", "--auth-key-file", keyFile, "--tls-pin", wrong); code != ExitFailed || !strings.Contains(stderr, "not the pinned one") {
		t.Errorf("rr with the wrong pin: exit %d, stderr %q", code, stderr)
	}
}

// `key new` makes a line a key file takes, and each is new.
func TestKeyNew(t *testing.T) {
	code, out, errOut := runCLI("key", "new", "alice")
	if code != ExitOK || !strings.HasPrefix(out, "alice ") || len(strings.Fields(out)[1]) != 64 {
		t.Fatalf("%d %q %q", code, out, errOut)
	}
	p := filepath.Join(t.TempDir(), "k")
	os.WriteFile(p, []byte(out), 0o600)
	if _, err := auth.LoadCredential(p); err != nil {
		t.Fatalf("the new key does not load: %v", err)
	}
	if _, again, _ := runCLI("key", "new", "alice"); again == out {
		t.Fatal("two keys alike")
	}
	if code, _, _ := runCLI("key", "new", "a b"); code != ExitUsage {
		t.Fatalf("a name with a blank: %d", code)
	}
}
