//go:build linux

package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/labtest"
)

// TestMain lets the test binary stand in for `wireperf lab router` when
// TestUpDown starts it as a detached process:
//
//	lab.test lab-router-helper STATEDIR --name NAME
//
// and for a wireperf server inside a lab host (startServer).
func TestMain(m *testing.M) {
	labtest.MaybeServe()
	if len(os.Args) >= 5 && os.Args[1] == "lab-router-helper" && os.Args[3] == "--name" {
		StateDir = os.Args[2]
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		if err := RouterMain(ctx, os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "router:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const helperEnv = "WIREPERF_LAB_HELPER"

// TestHelperLab is not a test: the lifecycle tests run the test binary
// with it to get a lab in a separate process that then panics, hangs or
// runs unprivileged.
func TestHelperLab(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the lifecycle tests")
	}
	l := New(t, Chain(0, nil))
	fmt.Printf("LABPREFIX %s\n", l.prefix)
	switch mode {
	case "panic":
		panic("helper panics on purpose")
	case "hang":
		time.Sleep(60 * time.Second) // load generator: the helper's work is to hang until its parent kills it
	}
}

// runHelper starts the test binary in helper mode and returns the lab's
// namespace prefix, as soon as the helper prints it, and the command.
func runHelper(t *testing.T, mode string, attr *syscall.SysProcAttr, bin string) (string, *exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^TestHelperLab$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.SysProcAttr = attr
	cmd.Dir = filepath.Dir(bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var all strings.Builder
	sc := bufio.NewScanner(out)
	prefix := ""
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		if p, ok := strings.CutPrefix(line, "LABPREFIX "); ok {
			prefix = p
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return prefix, cmd, &all
}

// A test that panics still removes its namespaces (t.Cleanup runs).
func TestCleanupAfterPanic(t *testing.T) {
	New(t, Topology{Hosts: []string{"x"}}) // skips here if unprivileged
	prefix, cmd, out := runHelper(t, "panic", nil, os.Args[0])
	if prefix == "" {
		t.Fatalf("helper printed no lab prefix:\n%s", out)
	}
	err := cmd.Wait()
	if err == nil {
		t.Fatal("the panicking helper exited 0")
	}
	if left := nsLeft(prefix); len(left) != 0 {
		t.Fatalf("namespaces left after a panic: %v", left)
	}
}

// A test process killed outright cannot clean up; the next New removes
// what it left.
func TestReapAfterKill(t *testing.T) {
	New(t, Topology{Hosts: []string{"x"}})
	prefix, cmd, out := runHelper(t, "hang", nil, os.Args[0])
	if prefix == "" {
		t.Fatalf("helper printed no lab prefix:\n%s", out)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if left := nsLeft(prefix); len(left) != 3 {
		t.Fatalf("expected the killed helper's 3 namespaces, found %v", left)
	}
	reapStale()
	if left := nsLeft(prefix); len(left) != 0 {
		t.Fatalf("namespaces left after reaping: %v", left)
	}
}

// Without privileges New skips and says why.
func TestSkipWithoutPrivilege(t *testing.T) {
	New(t, Topology{Hosts: []string{"x"}}) // we need root to drop to another user
	bin, attr := labtest.AsNobody(t)
	prefix, cmd, out := runHelper(t, "unprivileged", attr, bin)
	_ = cmd.Wait()
	text := out.String()
	if prefix != "" || !strings.Contains(text, "--- SKIP: TestHelperLab") ||
		!strings.Contains(text, "needs root or CAP_NET_ADMIN") {
		t.Fatalf("unprivileged New should skip with a reason; output:\n%s", text)
	}
	t.Logf("unprivileged: %s", firstLine(text, "lab: "))
}

func firstLine(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// Close removes everything, and a second Close is harmless.
func TestCloseRemovesNamespaces(t *testing.T) {
	l := New(t, Chain(0, nil))
	if len(nsLeft(l.prefix)) != 3 {
		t.Fatalf("want 3 namespaces, have %v", nsLeft(l.prefix))
	}
	// A process left running inside is killed by the teardown.
	cmd := l.Host("a").Command(context.Background(), "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The process is in the namespace once it runs sleep itself (the
	// namespace is entered before the exec).
	comm := fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid)
	for deadline := time.Now().Add(5 * time.Second); ; {
		if b, err := os.ReadFile(comm); err == nil && strings.TrimSpace(string(b)) == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never ran inside the lab host")
		}
		time.Sleep(5 * time.Millisecond) // bounded poll: until the command runs, 5 s at most
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if left := nsLeft(l.prefix); len(left) != 0 {
		t.Fatalf("left: %v", left)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("process inside the lab survived the teardown")
	}
}

// The persistent lab: Up, traffic, Status, Exec, Down.
func TestUpDown(t *testing.T) {
	New(t, Topology{Hosts: []string{"x"}}) // skip when unprivileged
	old := StateDir
	StateDir = t.TempDir()
	t.Cleanup(func() { StateDir = old })
	name := fmt.Sprintf("t%d", os.Getpid()%100000)
	t.Cleanup(func() { _ = Down(name) })
	info, err := Up(name, Config{RTT: 20 * time.Millisecond, Loss: 0.01, MTU: 1500, RandStart: 11,
		RouterCommand: []string{os.Args[0], "lab-router-helper", StateDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", info.NextSteps(""))
	if !strings.Contains(info.NextSteps(""), "wireperf lab exec "+name+" b --") || info.AtoB != "delay=10ms,loss=0.01" {
		t.Errorf("info: %+v", info)
	}
	if _, err := Up(name, Config{}); err == nil || !strings.Contains(err.Error(), "already up") {
		t.Errorf("second Up: %v", err)
	}
	if err := Exec(name, "a", []string{"true"}); err != nil {
		t.Errorf("exec true: %v", err)
	}
	var ee *exec.ExitError
	if err := Exec(name, "b", []string{"false"}); !errors.As(err, &ee) {
		t.Errorf("exec false: %v", err)
	}
	// No --tcp-buffers: the hosts run stock Linux's buffers, and say so.
	if info.TCPBuffers != BuffersStock || !strings.Contains(info.NextSteps(""), "TCP buffers: stock Linux") {
		t.Errorf("buffers %q, next steps:\n%s", info.TCPBuffers, info.NextSteps(""))
	}
	a := &Host{Name: "a", NS: info.Namespaces["a"]}
	rmem, err := a.Run(context.Background(), "cat", "/proc/sys/net/ipv4/tcp_rmem")
	if err != nil || strings.Join(strings.Fields(string(rmem)), " ") != StockTCPBuffers()["net.ipv4.tcp_rmem"] {
		t.Errorf("host a's tcp_rmem %q (%v), want %q", rmem, err, StockTCPBuffers()["net.ipv4.tcp_rmem"])
	}
	b := &Host{Name: "b", NS: info.Namespaces["b"], Addr: netip.MustParseAddr(info.Addrs["b"])}
	res := udpStream(t, a, b, 3000, 100, 10000, 200*time.Millisecond)
	// The router writes its counters every second.
	var st *State
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err = Status(name)
		if err == nil && st.Router.AtoB.Counters.In >= 3000 && st.Router.AtoB.QueuedPackets == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond) // bounded poll: the lab's status, until the deadline above
	}
	if err != nil {
		t.Fatal(err)
	}
	ab := st.Router.AtoB
	t.Logf("status: running %v, updated %v, a→b %+v", st.Running, st.Updated.Format(time.RFC3339Nano), ab.Counters)
	if !st.Running || ab.Counters.In != 3000 || res.Lost != ab.Lost()+res.RcvbufErrors || ab.TunIn == nil {
		t.Errorf("status %+v does not match the receiver %+v", st, res)
	}
	if names, _ := List(); len(names) != 1 || names[0] != name {
		t.Errorf("List = %v", names)
	}
	pid := st.RouterPID
	if err := Down(name); err != nil {
		t.Fatal(err)
	}
	if left := nsLeft("wp-" + name + "-"); len(left) != 0 {
		t.Errorf("namespaces left after Down: %v", left)
	}
	if routerAlive(pid, name) {
		t.Errorf("router %d still runs after Down", pid)
	}
	if ents, _ := os.ReadDir(StateDir); len(ents) != 0 {
		t.Errorf("files left after Down: %v", ents)
	}
	if _, err := Status(name); err == nil {
		t.Error("Status after Down should fail")
	}
}
