package mcast

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// The helpers of the namespace tests: every namespace a test creates is
// named mc39-<pid>-<n> and removed when the test ends, failed or not.

var nsSeq atomic.Int64

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip")
	}
}

// newNetns creates a namespace with its loopback up and returns its name.
func newNetns(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("mc39-%d-%d", os.Getpid(), nsSeq.Add(1))
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return name
}

func run(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// inNetns runs fn on a thread in namespace ns: the sockets fn opens
// belong to ns for good. The thread is never unlocked, so the runtime
// ends it rather than reuse a thread in another namespace.
func inNetns(t *testing.T, ns string, fn func() error) {
	t.Helper()
	f, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	if err := <-errc; err != nil {
		t.Fatalf("in namespace %s: %v", ns, err)
	}
}

// linkStats is an interface's counters in namespace ns (ip -s -j link).
type linkStats struct {
	RxPackets, TxPackets, RxBytes int64
}

func readLinkStats(t *testing.T, ns, dev string) linkStats {
	t.Helper()
	out := run(t, "ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev)
	var links []struct {
		Stats64 struct {
			Rx struct{ Packets, Bytes int64 } `json:"rx"`
			Tx struct{ Packets int64 }        `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		t.Fatalf("ip -s -j link show dev %s: %v\n%s", dev, err, out)
	}
	s := links[0].Stats64
	return linkStats{RxPackets: s.Rx.Packets, TxPackets: s.Tx.Packets, RxBytes: s.Rx.Bytes}
}

// snmp reads a counter of /proc/net/snmp ("Udp", "InDatagrams") in ns.
func snmp(t *testing.T, ns, proto, field string) int64 {
	t.Helper()
	out := run(t, "ip", "netns", "exec", ns, "cat", "/proc/net/snmp")
	var names []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != proto+":" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, n := range names {
			if n == field && i+1 < len(f) {
				var v int64
				fmt.Sscan(f[i+1], &v)
				return v
			}
		}
	}
	t.Fatalf("%s %s not in /proc/net/snmp", proto, field)
	return 0
}

// collect drains events until ctx is done or the channel closes.
func collect(ctx context.Context, ch <-chan FlowEvent) []FlowEvent {
	var out []FlowEvent
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, e)
		case <-ctx.Done():
			return out
		}
	}
}
