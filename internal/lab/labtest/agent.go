package labtest

import (
	"os"
	"strings"
	"testing"
	"time"
)

const (
	// agentEnv holds "ADDR|KEYFILE" for a helper's server; with a key
	// file it is also an agent (wireperf server --agent).
	agentEnv = "WIREPERF_LABTEST_AGENT"
	// agentListening starts the line such a helper prints with its port.
	agentListening = "LABTEST-AGENT "
)

// MaybeServeAgent turns the test binary into a wireperf server, an agent
// when given a key file, when it runs as the helper process that
// StartAgent starts, and does not return then. Call it first in TestMain
// (MaybeServe calls it too).
func MaybeServeAgent() {
	v := os.Getenv(agentEnv)
	if v == "" {
		return
	}
	bind, keyFile, _ := strings.Cut(v, "|")
	// A short grace: stopping this helper is how a test kills a receiver
	// mid-test.
	serve(bind, keyFile, 10*time.Millisecond, agentListening)
}

// StartAgent starts a wireperf server in host h, bound to h.Addr, that is
// also an agent for the controllers of keyFile ("" for a plain server),
// and returns the process and its port. Stop kills it at once, with its
// tests. The test binary's TestMain must call MaybeServeAgent.
func StartAgent(t testing.TB, h Host, keyFile string) (*Proc, int) {
	t.Helper()
	return startServing(t, h, agentEnv+"="+h.Addr.String()+"|"+keyFile, agentListening)
}
