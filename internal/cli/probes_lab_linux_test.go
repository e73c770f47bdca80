package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/ping"
	"github.com/wireperf/wireperf/internal/tcpconnect"
	"github.com/wireperf/wireperf/internal/trace"
)

// probeHelperEnv makes the test binary wireperf, run as nobody.
const probeHelperEnv = "WIREPERF_CLI_PROBE_AS_NOBODY"

// TestProbeHelperProcess is not a test: started as root inside a lab
// host, it drops to user and group nobody, checks that no capability is
// left, and runs wireperf's command line (the arguments after "--").
func TestProbeHelperProcess(t *testing.T) {
	if os.Getenv(probeHelperEnv) == "" {
		t.Skip("helper process: wireperf as nobody for the probe lab tests")
	}
	if err := syscall.Setgroups(nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setgid(65534); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setuid(65534); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if (strings.HasPrefix(line, "CapEff:") || strings.HasPrefix(line, "CapPrm:")) && strings.Trim(strings.Fields(line)[1], "0") != "" {
			t.Fatalf("a capability is left: %s", line)
		}
	}
	os.Exit(Main(flag.Args()))
}

// asNobody runs wireperf with args inside h as nobody, without any
// capability, and returns its exit status, output and error output.
func asNobody(t *testing.T, h *lab.Host, args ...string) (int, []byte, string) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := h.Command(ctx, bin, append([]string{"-test.run=^TestProbeHelperProcess$", "-test.count=1", "--"}, args...)...)
	cmd.Env = append(os.Environ(), probeHelperEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.Bytes(), errb.String()
}

// As nobody, without capabilities, in host a of a ─ r ─ b where b runs
// nothing of wireperf's: tcp-connect and trace work; ping says in one
// line what to set while the namespace's ping_group_range admits no one,
// and works once it admits nobody's group. Counts are checked against
// ground truth: the accepts of a listener and the refusals of a closed
// port for tcp-connect, the routers' addresses for trace, and the
// impairment router's drops and duplicates for ping.
func TestProbesAsNobodyInLab(t *testing.T) {
	// Waits for 20 s on 1.5 s of CPU (a lossy lab's retransmits and
	// timeouts), beside TestMeshApplySampledThousand, which computes. The
	// lab, its router and its counters are its own.
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the lab needs root (the probes then run as nobody)")
	}
	topo := lab.Chain(1500, nil)
	topo.Router = &lab.RouterSpec{Host: "r", A: "a", B: "b", RandStart: 38,
		AtoB: impair.Config{Loss: 0.1}, BtoA: impair.Config{Loss: 0.1, Duplicate: 0.1}}
	l := lab.New(t, topo)
	a, r, b := l.Host("a"), l.Host("r"), l.Host("b")
	target := b.AddrOn("r")

	t.Run("tcp-connect", func(t *testing.T) {
		ln, err := b.Listen(context.Background(), &net.ListenConfig{}, "tcp4", net.JoinHostPort(target.String(), "0"))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		accepts := make(chan struct{}, 100)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
				accepts <- struct{}{}
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		// A lost SYN or SYN-ACK is sent again after 1 s: the timeout
		// leaves room for three tries.
		code, out, stderr := asNobody(t, a, "tcp-connect", net.JoinHostPort(target.String(), strconv.Itoa(port)),
			"--count", "20", "--interval", "10ms", "--timeout", "8s", "-J")
		var doc tcpconnect.Document
		if err := json.Unmarshal(out, &doc); err != nil || code != 0 || doc.TCPConnect == nil {
			t.Fatalf("exit %d, %v: %s %s", code, err, out, stderr)
		}
		got := doc.TCPConnect
		if got.Attempts != 20 || got.Connected != 20 || got.Connect.Count != 20 {
			t.Fatalf("%+v: want 20 attempts, all connected", got)
		}
		// Each handshake the client counted, the listener completed (its
		// last ACK may still be on the way).
		wait := time.NewTimer(10 * time.Second)
		defer wait.Stop()
		for n := range 20 {
			select {
			case <-accepts:
			case <-wait.C:
				t.Fatalf("the listener accepted %d connections, the client counted 20", n)
			}
		}
		ln.Close()
		// A closed port: b answers every SYN with a reset.
		code, out, stderr = asNobody(t, a, "tcp-connect", net.JoinHostPort(target.String(), strconv.Itoa(port)),
			"--count", "10", "--interval", "10ms", "--timeout", "8s", "-J")
		doc = tcpconnect.Document{}
		if err := json.Unmarshal(out, &doc); err != nil || code != 0 || doc.TCPConnect == nil {
			t.Fatalf("closed port: exit %d, %v: %s %s", code, err, out, stderr)
		}
		if got := doc.TCPConnect; got.Attempts != 10 || got.Refused != 10 || got.Connected != 0 {
			t.Fatalf("closed port: %+v, want 10 refused", got)
		}
	})

	t.Run("trace", func(t *testing.T) {
		// The router's loss may take a hop's probes: 5 a hop.
		code, out, stderr := asNobody(t, a, "trace", target.String(), "--max-hops", "5", "--probes", "5", "--probe-timeout", "1s", "-J")
		var doc trace.Document
		if err := json.Unmarshal(out, &doc); err != nil || code != 0 || doc.Trace == nil {
			t.Fatalf("exit %d, %v: %s %s", code, err, out, stderr)
		}
		// r forwards each packet twice, into the impairment router's TUN
		// device and out of the other: it is two hops.
		want := []string{r.AddrOn("a").String(), r.AddrOn("a").String(), target.String()}
		if got := doc.Trace.Path(); !slices.Equal(got, want) || !doc.Trace.Reached || doc.Trace.Raw {
			t.Fatalf("path %q (reached %v), want %q reached without a raw socket", got, doc.Trace.Reached, want)
		}
		// ICMP echo requests through a ping socket: the routers' time
		// exceeded comes to its error queue too.
		if err := a.Sysctl("net.ipv4.ping_group_range", "65534 65534"); err != nil {
			t.Fatal(err)
		}
		code, out, stderr = asNobody(t, a, "trace", target.String(), "--proto", "icmp", "--max-hops", "5", "--probes", "5", "--probe-timeout", "1s", "-J")
		doc = trace.Document{}
		if err := json.Unmarshal(out, &doc); err != nil || code != 0 || doc.Trace == nil {
			t.Fatalf("--proto icmp: exit %d, %v: %s %s", code, err, out, stderr)
		}
		if got := doc.Trace.Path(); !slices.Equal(got, want) || !doc.Trace.Reached {
			t.Fatalf("--proto icmp: path %q (reached %v), want %q reached", got, doc.Trace.Reached, want)
		}
		code, _, stderr = asNobody(t, a, "trace", target.String(), "--raw")
		if code != ExitFailed || !strings.Contains(stderr, "CAP_NET_RAW") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Fatalf("--raw as nobody: exit %d, %q: want 1 and one line naming CAP_NET_RAW", code, stderr)
		}
	})

	t.Run("ping", func(t *testing.T) {
		if err := a.Sysctl("net.ipv4.ping_group_range", "1 0"); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := asNobody(t, a, "ping", target.String(), "--count", "1")
		if code != ExitFailed || !strings.Contains(stderr, `net.ipv4.ping_group_range is "1 0"`) || !strings.Contains(stderr, "CAP_NET_RAW") ||
			strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Fatalf("ping not admitted: exit %d, %q: want 1 and one line naming the sysctl and CAP_NET_RAW", code, stderr)
		}
		if err := a.Sysctl("net.ipv4.ping_group_range", "65534 65534"); err != nil {
			t.Fatal(err)
		}
		before := l.Router().Stats()
		code, out, stderr := asNobody(t, a, "ping", target.String(), "--count", "300", "--interval", "10ms", "--timeout", "1s", "-J")
		after := l.Router().Stats()
		var doc ping.Document
		if err := json.Unmarshal(out, &doc); err != nil || code != 0 || doc.Ping == nil {
			t.Fatalf("exit %d, %v: %s %s", code, err, out, stderr)
		}
		got := doc.Ping
		dropped := int(after.AtoB.Dropped() - before.AtoB.Dropped() + after.BtoA.Dropped() - before.BtoA.Dropped())
		dups := int(after.BtoA.Duplicated - before.BtoA.Duplicated)
		if in := after.AtoB.In - before.AtoB.In; in != 300 {
			t.Fatalf("the router saw %d requests, want 300 (other traffic in the window?)", in)
		}
		if got.Sent != 300 || got.Sent-got.Received != dropped || got.Duplicates != dups || dropped == 0 || dups == 0 {
			t.Fatalf("ping %+v; the router dropped %d and duplicated %d", got, dropped, dups)
		}
		if got.TTL != 62 || got.TTLChanges != 0 {
			t.Fatalf("TTL %d with %d changes, want 62 (r forwards twice, see trace) and none", got.TTL, got.TTLChanges)
		}
		t.Logf("ping through the lab: %d sent, %d received, %d duplicates; the router dropped %d, duplicated %d; RTT p50 %.0f µs",
			got.Sent, got.Received, got.Duplicates, dropped, dups, got.RTT.P50)
	})
}
