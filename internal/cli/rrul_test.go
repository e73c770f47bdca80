package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/server"
)

func TestRRULUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rrul"}, "HOST"},
		{[]string{"rrul", "h", "i"}, "HOST"},
		{[]string{"rrul", "h", "-t", "0s"}, "duration"},
		{[]string{"rrul", "h", "--idle", "100ms"}, "idle phase"},
		{[]string{"rrul", "h", "--step", "1ms"}, "step"},
		{[]string{"rrul", "h", "--db", "x.db"}, "--save"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want %d and one line mentioning %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

// A server that admits fewer tests from one client than a run holds (4,
// which the default admits): the command fails in one line that names
// the server's flag, before any load runs.
func TestRRULRefusedByTheServersLimit(t *testing.T) {
	port := strconv.Itoa(startServerWith(t, func(c *server.Config) { c.Limits.MaxTestsPerClient = 3 }))
	code, out, stderr := runCLI("rrul", "127.0.0.1", "-p", port, "--idle", "1s", "-t", "1s", "--after", "0s")
	if code != ExitFailed || out != "" || !strings.Contains(stderr, "--max-tests-per-client") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d and one line naming --max-tests-per-client", code, out, stderr, ExitFailed)
	}
}
