package mcasttest

import (
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

var nsSeq atomic.Int64

func NeedRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip")
	}
}

// NewNetns creates a namespace with its loopback up and returns its name.
func NewNetns(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("mc39-%d-%d", os.Getpid(), nsSeq.Add(1))
	Run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	Run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return name
}

func Run(t *testing.T, argv ...string) string {
	t.Helper()
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

// InNetns runs fn on a thread in namespace ns: the sockets fn opens
// belong to ns for good. The thread is never unlocked, so the runtime
// ends it rather than reuse a thread in another namespace.
func InNetns(t *testing.T, ns string, fn func() error) {
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

// LinkStats is an interface's counters in namespace ns (ip -s -j link).
type LinkStats struct {
	RxPackets, TxPackets, RxBytes int64
}

func ReadLinkStats(t *testing.T, ns, dev string) LinkStats {
	t.Helper()
	out := Run(t, "ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev)
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
	return LinkStats{RxPackets: s.Rx.Packets, TxPackets: s.Tx.Packets, RxBytes: s.Rx.Bytes}
}

// SNMP reads a counter of /proc/net/snmp ("Udp", "InDatagrams") in ns.
func SNMP(t *testing.T, ns, proto, field string) int64 {
	t.Helper()
	out := Run(t, "ip", "netns", "exec", ns, "cat", "/proc/net/snmp")
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

// OneHost is a namespace whose veth pair carries multicast: the sender's
// datagrams come back to the host's own receivers (IP_MULTICAST_LOOP),
// as on any host with a multicast route. v0 has 10.39.0.1/24 and
// fd39::1/64, and the IPv4 multicast route; IPv6 multicast goes out of
// the interface a socket names.
func OneHost(t *testing.T) string {
	ns := NewNetns(t)
	Run(t, "ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
	Run(t, "ip", "-n", ns, "addr", "add", "10.39.0.1/24", "dev", "v0")
	Run(t, "ip", "-n", ns, "addr", "add", "fd39::1/64", "dev", "v0", "nodad")
	Run(t, "ip", "-n", ns, "link", "set", "v0", "up")
	Run(t, "ip", "-n", ns, "link", "set", "v1", "up")
	Run(t, "ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", "v0")
	// For iperf 2, which connects its sender before it names an
	// interface: the routing table's choice among the two ends' ff00::/8.
	Run(t, "ip", "-n", ns, "-6", "route", "add", "ff00::/8", "dev", "v0", "table", "local", "metric", "10")
	return ns
}

// Go runs fn on a goroutine whose thread is in namespace ns, for the
// whole of fn (a server's run, say), and returns the channel that gets
// fn's error, or the setns error, once.
func Go(ns string, fn func() error) <-chan error {
	errc := make(chan error, 1)
	go func() {
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		runtime.LockOSThread() // never unlocked: see InNetns
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return errc
}
