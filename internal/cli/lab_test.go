//go:build linux

// The lab is Linux only (network namespaces), and so are these tests.

package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/lab/labtest"
)

const labHelperEnv = "WIREPERF_CLI_LAB_HELPER"

// TestLabHelperProcess is not a test: the lab tests run the test binary
// with it as wireperf itself (the lab's router, and wireperf's server and
// client inside the lab's hosts). The environment variable holds the lab
// state directory; the arguments after "--" are wireperf's.
func TestLabHelperProcess(t *testing.T) {
	dir := os.Getenv(labHelperEnv)
	if dir == "" {
		t.Skip("helper process: wireperf's command line for the lab tests")
	}
	lab.StateDir = dir
	os.Exit(Main(flag.Args()))
}

// labHelperArgv is the command line that runs this test binary as wireperf.
func labHelperArgv(t *testing.T, bin string) []string {
	t.Helper()
	return []string{bin, "-test.run=^TestLabHelperProcess$", "-test.count=1", "--"}
}

func TestLabBadUsageExitsTwoWithOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"lab"}, "up|exec|status|down|list"},
		{[]string{"lab", "bogus"}, `unknown lab command "bogus"`},
		{[]string{"lab", "up"}, "NAME"},
		{[]string{"lab", "up", "a", "b"}, "NAME"},
		{[]string{"lab", "up", "Bad_Name"}, "Bad_Name"},
		{[]string{"lab", "up", "x", "--rtt", "fast"}, "--rtt"},
		{[]string{"lab", "up", "x", "--rtt", "3h"}, "--rtt"},
		{[]string{"lab", "up", "x", "--jitter", "-1ms"}, "--jitter"},
		{[]string{"lab", "up", "x", "--loss", "150%"}, "--loss"},
		{[]string{"lab", "up", "x", "--reorder", "often"}, "--reorder"},
		{[]string{"lab", "up", "x", "--duplicate", "-1%"}, "--duplicate"},
		{[]string{"lab", "up", "x", "--rate", "1q"}, "--rate"},
		{[]string{"lab", "up", "x", "--mtu", "100"}, "--mtu 100"},
		{[]string{"lab", "up", "x", "--burst-loss", "0.1"}, "--burst-loss"},
		{[]string{"lab", "up", "x", "--burst-loss", "1%,0"}, "--burst-loss"},
		{[]string{"lab", "up", "x", "--queue", "1M"}, "--rate"},
		// One units parser: the lab refuses what the client's -b refuses.
		{[]string{"lab", "up", "x", "--rate", "1gbit"}, `invalid argument "1gbit" for "--rate" flag: invalid rate "1gbit": unknown suffix "gbit"`},
		{[]string{"lab", "up", "x", "--rate", "1g", "--queue", "1MB"}, `unknown suffix "MB"`},
		{[]string{"lab", "up", "x", "--rate", "1g", "--queue", "lots"}, "--queue"},
		{[]string{"lab", "up", "x", "--rand-start", "-1"}, "--rand-start"},
		{[]string{"lab", "up", "x", "--no-such-flag"}, "--no-such-flag"},
		{[]string{"lab", "exec"}, "NAME"},
		{[]string{"lab", "exec", "x", "a"}, "COMMAND"},
		{[]string{"lab", "exec", "x", "a", "--"}, "COMMAND"},
		{[]string{"lab", "exec", "x", "z", "--", "true"}, `host "z"`},
		{[]string{"lab", "exec", "-x-", "a", "--", "true"}, "-x-"},
		{[]string{"lab", "status"}, "NAME"},
		{[]string{"lab", "status", "x", "--jsn"}, "--jsn"},
		{[]string{"lab", "down", "x", "y"}, "NAME"},
		{[]string{"lab", "list", "x"}, "no arguments"},
		{[]string{"lab", "router"}, "--name"},
		{[]string{"lab", "router", "--name", "UPPER"}, "UPPER"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, ExitUsage, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q, want one line mentioning %q", tc.args, stderr, tc.want)
		}
	}
}

// Managing a lab without root fails at once, with a reason, and exit 1.
func TestLabNeedsRoot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the lab is Linux only")
	}
	args := [][]string{{"lab", "up", "x", "--rtt", "10ms"}, {"lab", "exec", "x", "a", "--", "true"}, {"lab", "down", "x"}, {"lab", "router", "--name", "x"}}
	if os.Geteuid() != 0 {
		for _, a := range args {
			code, _, stderr := runCLI(a...)
			if code != ExitFailed || !strings.Contains(stderr, "needs root") {
				t.Errorf("%q: exit %d, stderr %q; want 1 and a word about root", a, code, stderr)
			}
		}
		return
	}
	// As root, run (a copy of) this test binary as nobody.
	bin, attr := labtest.AsNobody(t)
	dir := filepath.Dir(bin)
	for _, a := range args {
		cmd := exec.Command(bin, append(labHelperArgv(t, bin)[1:], a...)...)
		cmd.Env = append(os.Environ(), labHelperEnv+"="+dir)
		cmd.Dir = dir
		cmd.SysProcAttr = attr
		out, err := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		if code != ExitFailed || !strings.Contains(string(out), "needs root") || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("%q as nobody: exit %d (%v), output %q; want 1 and one line about root", a, code, err, out)
		}
	}
}

// A whole lab from the command line: up, a wireperf test through it with
// exec, status in text and JSON, an exit status passed on by exec, down.
// The router, server and client are this test binary standing in for
// wireperf (TestLabHelperProcess).
func TestLabUpExecStatusDown(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the lab needs Linux and root")
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the lab needs %s: %v", tool, err)
		}
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("the lab needs /dev/net/tun: %v", err)
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	oldDir, oldRouter, oldExit := lab.StateDir, labRouterCommand, labExit
	lab.StateDir = stateDir
	labRouterCommand = append(labHelperArgv(t, bin), "lab", "router")
	var mu sync.Mutex
	var exits []int
	labExit = func(code int) {
		mu.Lock()
		exits = append(exits, code)
		mu.Unlock()
	}
	lastExit := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(exits) == 0 {
			return 0, false
		}
		return exits[len(exits)-1], true
	}
	t.Cleanup(func() { lab.StateDir, labRouterCommand, labExit = oldDir, oldRouter, oldExit })
	// Processes started by the lab (the router, and what exec runs)
	// inherit this: it makes the test binary behave as wireperf.
	t.Setenv(labHelperEnv, stateDir)
	var rnd [2]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("wpc%d-%s", os.Getpid()%100000, hex.EncodeToString(rnd[:]))
	serverDone := make(chan struct{})
	serverStarted := false
	t.Cleanup(func() {
		if serverStarted {
			select {
			case <-serverDone:
			case <-time.After(10 * time.Second):
				t.Error("the server inside the lab did not stop")
			}
		}
	})
	// Down runs before the wait above (cleanups run last first), and even
	// when the test fails; it kills whatever still runs inside.
	t.Cleanup(func() { _ = lab.Down(name) })

	code, out, stderr := runCLI("lab", "up", name, "--rtt", "20ms", "--loss", "0.5%", "--duplicate", "0.5%", "--rand-start", "7")
	if code != ExitOK {
		t.Fatalf("lab up: exit %d: %s", code, stderr)
	}
	t.Logf("lab up said:\n%s", out)
	for _, want := range []string{
		"wireperf lab exec " + name + " b -- wireperf -s",
		"wireperf lab exec " + name + " a -- wireperf -c 10.77.2.2",
		"delay=10ms,loss=0.005,dup=0.005", "rand-start 7",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up's next steps lack %q", want)
		}
	}
	if code, out, _ := runCLI("lab", "list"); code != ExitOK || !strings.Contains(out, name) {
		t.Errorf("lab list: exit %d, %q; want %s in it", code, out, name)
	}
	if code, _, stderr := runCLI("lab", "up", name); code != ExitFailed || !strings.Contains(stderr, "already up") {
		t.Errorf("second lab up: exit %d, %q", code, stderr)
	}

	// What the next steps say: a server in b, a client in a.
	serverStarted = true
	go func() {
		defer close(serverDone)
		runCLI(append([]string{"lab", "exec", name, "b", "--"}, append(labHelperArgv(t, bin), "-s", "--once", "--log-level", "warn")...)...)
	}()
	var clientCode int
	deadline := time.Now().Add(8 * time.Second)
	for {
		clientCode, _, stderr = runCLI(append([]string{"lab", "exec", name, "a", "--"},
			append(labHelperArgv(t, bin), "-c", "10.77.2.2", "-t", "1", "-i", "0")...)...)
		if clientCode == ExitOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // bounded poll: the server may not listen yet; until the deadline above
	}
	if clientCode != ExitOK {
		c, _ := lastExit()
		t.Fatalf("wireperf client in a: exit %d (status %d): %s", clientCode, c, stderr)
	}

	// A command's exit status comes back from exec.
	if code, _, _ := runCLI("lab", "exec", name, "a", "--", "sh", "-c", "exit 3"); code == ExitOK {
		t.Error("lab exec of a failing command succeeded")
	}
	if c, ok := lastExit(); !ok || c != 3 {
		t.Errorf("lab exec passed on status %d (%v), want 3", c, ok)
	}

	// The router writes its counters every second.
	var st lab.State
	deadline = time.Now().Add(5 * time.Second)
	for {
		code, out, stderr = runCLI("lab", "status", name, "--json")
		if code != ExitOK {
			t.Fatalf("lab status --json: exit %d: %s", code, stderr)
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("lab status --json: %v in %q", err, out)
		}
		if st.Router.AtoB.Counters.In > 1000 && st.Router.AtoB.QueuedPackets == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // bounded poll: the lab's status, until the deadline above
	}
	ab := st.Router.AtoB
	if !st.Running || ab.Counters.In < 1000 || ab.TunIn == nil || st.Router.BtoA.TunIn == nil || !ab.Counters.Balanced() {
		t.Errorf("status after a 1-second test: running %v, a→b %+v", st.Running, ab)
	}
	if ab.DroppedLoss == 0 || ab.Duplicated == 0 {
		t.Errorf("0.5%% loss and duplication did not happen: %+v", ab.Counters)
	}
	code, out, stderr = runCLI("lab", "status", name)
	if code != ExitOK {
		t.Fatalf("lab status: exit %d: %s", code, stderr)
	}
	t.Logf("lab status said:\n%s", out)
	for _, want := range []string{"router running", "a→b", "b→a", "TUN queue drops", "imp-a: rx", "imp-b: rx"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab status lacks %q", want)
		}
	}

	if code, out, stderr := runCLI("lab", "down", name); code != ExitOK || !strings.Contains(out, "is down") {
		t.Fatalf("lab down: exit %d: %s %s", code, out, stderr)
	}
	if code, out, _ := runCLI("lab", "list"); code != ExitOK || strings.Contains(out, name) {
		t.Errorf("lab list after down: exit %d, %q", code, out)
	}
	if code, _, stderr := runCLI("lab", "status", name); code != ExitFailed || !strings.Contains(stderr, "no lab named") {
		t.Errorf("lab status after down: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat("/run/netns/wp-" + name + "-a"); err == nil {
		t.Error("namespaces left after lab down")
	}
	if code, out, stderr := runCLI("lab", "down", name); code != ExitFailed || strings.Contains(out, "is down") || !strings.Contains(stderr, "no lab named") {
		t.Errorf("lab down twice: exit %d, %q %q; want 1 and no lab named", code, out, stderr)
	}
}
