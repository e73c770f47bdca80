package measure

import (
	"os/exec"
	"strings"
	"testing"
)

// The model of a test, the schedule and the archive describe tests; they
// compile against none of the machinery that runs them (issue 37): a
// package of the data plane, the control channel, the emitters or the
// server in their imports fails here.
func TestModelImportsNoRunner(t *testing.T) {
	const mod = "github.com/wireperf/wireperf/internal/"
	forbidden := []string{"session", "control", "flowrun", "tcpflow", "udpflow", "emit", "server", "runner", "runner/udpmonrun", "iperf3", "rr", "archive"}
	for _, pkg := range []string{"measure", "schedule", "archive"} {
		out, err := exec.Command("go", "list", "-deps", "../"+pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[strings.TrimPrefix(d, mod)] = true
		}
		for _, f := range forbidden {
			if f == pkg {
				continue
			}
			if deps[f] {
				t.Errorf("%s imports %s (go list -deps)", pkg, f)
			}
		}
	}
}
