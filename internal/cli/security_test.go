package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	open := write("open", "alice 0123456789abcdef0123\n", 0o644)
	empty := write("empty", "", 0o600)
	key := write("key", "alice 0123456789abcdef0123\n", 0o600)
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
