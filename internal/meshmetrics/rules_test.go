package meshmetrics

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The shipped rules load, and their unit tests (every alert firing and
// not firing) pass, as promtool judges them. internal/daemon's
// TestPrometheusRunsTheRulesAndTheDashboard runs them on a live daemon.
func TestShippedRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool on PATH (Debian's package prometheus): the rules are not checked")
	}
	dir := filepath.Join("..", "..", "monitoring")
	for _, args := range [][]string{{"check", "rules", "wireperf.rules.yml"}, {"test", "rules", "wireperf.rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
