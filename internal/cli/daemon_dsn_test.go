package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A DSN asking for what a pooler in transaction mode loses (prepared
// statements) is refused in one line with exit 2, before anything
// connects or listens.
func TestDaemonRefusesASessionStateDSN(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "daemon.yaml")
	if err := os.WriteFile(cfg, []byte("host: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("daemon", "--config", cfg, "--db", "postgres://u:secret@127.0.0.1:1/w?default_query_exec_mode=cache_statement")
	if code != ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "secret") ||
		!strings.HasPrefix(errOut, "wireperf: the archive's DSN asks for default_query_exec_mode=cache_statement: ") {
		t.Fatalf("%d %q %q", code, out, errOut)
	}
}
