//go:build linux

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/lab"
)

func TestLabSendersBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "up", "x", "--access-rate", "300m"}, "--senders"},
		{[]string{"lab", "up", "x", "--senders", "33"}, "--senders 33"},
		{[]string{"lab", "up", "x", "--senders", "-1"}, "--senders -1"},
		{[]string{"lab", "up", "x", "--senders", "2", "--access-rate", "fast"}, "--access-rate"},
		{[]string{"lab", "exec", "x", "a33", "--", "true"}, `host "a33"`},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A many-senders lab from the command line: up with two capped access
// links, exec in a sender and in s, status with the access links' counts,
// down.
func TestLabUpSenders(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the lab needs root")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the lab needs %s: %v", tool, err)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	oldDir, oldRouter, oldExit := lab.StateDir, labRouterCommand, labExit
	lab.StateDir = stateDir
	labRouterCommand = append(labHelperArgv(t, bin), "lab", "router")
	var execExit []int
	labExit = func(code int) { execExit = append(execExit, code) }
	t.Cleanup(func() { lab.StateDir, labRouterCommand, labExit = oldDir, oldRouter, oldExit })
	t.Setenv(labHelperEnv, stateDir)
	var rnd [2]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("wps%d-%s", os.Getpid()%100000, hex.EncodeToString(rnd[:]))
	t.Cleanup(func() { _ = lab.Down(name) })

	code, out, stderr := runCLI("lab", "up", name, "--senders", "2", "--access-rate", "100m", "--rtt", "10ms", "--rate", "1g")
	if code != ExitOK {
		t.Fatalf("lab up: exit %d: %s", code, stderr)
	}
	t.Logf("lab up said:\n%s", out)
	for _, want := range []string{
		"a1 (10.77.1.1), a2 (10.77.2.1)", "─ s ─ r ─ b (10.77.4.2)",
		"lab exec " + name + " a2 -- wireperf server --agent --agent-key-file K",
		"group --pair 10.77.1.1,10.77.4.2 --pair 10.77.2.1,10.77.4.2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up's next steps lack %q", want)
		}
	}
	// a2 reaches b through s and the router: a connection to a closed
	// port there is refused by b (bash's /dev/tcp, exit status 1).
	runCLI("lab", "exec", name, "a2", "--", "bash", "-c", "exec 3<>/dev/tcp/10.77.4.2/9")
	if len(execExit) != 1 || execExit[0] != 1 {
		t.Fatalf("exec in a2: exit statuses %v, want [1] (connection refused by b)", execExit)
	}
	code, out, stderr = runCLI("lab", "status", name, "-J")
	if code != ExitOK {
		t.Fatalf("lab status: exit %d: %s", code, stderr)
	}
	var st lab.State
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Senders != 2 || st.AccessRate != 100e6 || len(st.Access) != 2 || st.Access[1].Sender != "a2" || st.Access[1].Link.RxPackets == 0 {
		t.Fatalf("status: senders %d, access rate %v, access %+v", st.Senders, st.AccessRate, st.Access)
	}
	if tun := st.Router.AtoB.TunIn; tun == nil || tun.TxPackets == 0 {
		t.Fatalf("nothing entered the router toward b: %+v", tun)
	}
	code, out, _ = runCLI("lab", "status", name)
	if code != ExitOK || !strings.Contains(out, "access links (counted on s)") || !strings.Contains(out, "a2 (10.77.2.1)") {
		t.Fatalf("text status: exit %d:\n%s", code, out)
	}
	if code, out, _ := runCLI("lab", "list"); code != ExitOK || !strings.Contains(out, name+"\ta1…a2 ─ s ─ r ─ b 10.77.4.2") {
		t.Errorf("lab list: exit %d:\n%s", code, out)
	}
	if code, _, stderr := runCLI("lab", "down", name); code != ExitOK {
		t.Fatalf("lab down: exit %d: %s", code, stderr)
	}
	for _, h := range []string{"a1", "a2", "s", "r", "b"} {
		if _, err := os.Stat("/run/netns/wp-" + name + "-" + h); err == nil {
			t.Errorf("namespace of %s left behind", h)
		}
	}
}
