//go:build linux

package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Lab is a set of network namespaces built from a Topology.
type Lab struct {
	topo   Topology
	prefix string // namespace names are prefix + host
	hosts  map[string]*Host
	router *Router
	logf   func(string, ...any)

	mu     sync.Mutex
	closed bool
}

// Host is one namespace of a Lab.
type Host struct {
	Name string     // host name in the Topology ("a")
	NS   string     // network namespace name (under /run/netns)
	Addr netip.Addr // the address on the host's first link

	lab    *Lab
	addrs  map[string]netip.Addr // peer host → this host's address on the link to it
	ifaces map[string]string     // peer host → this host's interface to it
}

var (
	labSeq   atomic.Uint64
	reapOnce sync.Once
)

// testPrefix matches namespaces made by New: wpt-PID-N-host.
var testNS = regexp.MustCompile(`^wpt-([0-9]+)-`)

// New builds topo for a test. It skips the test, saying why, when the
// process may not create network namespaces (it needs root, or
// CAP_NET_ADMIN and CAP_SYS_ADMIN for `ip netns add`) or lacks ip or tc. It
// registers the teardown with t.Cleanup before creating anything, so a
// failure or a panic in the test, or in New itself, still removes every
// namespace (and with it every veth, qdisc and TUN device) and stops the
// router.
func New(t TB, topo Topology) *Lab {
	t.Helper()
	if err := topo.Validate(); err != nil {
		t.Fatalf("%v", err)
	}
	if reason := missingPrivilege(topo.Router != nil); reason != "" {
		t.Skipf("lab: %s", reason)
	}
	reapOnce.Do(reapStale)
	n := labSeq.Add(1)
	var rnd [2]byte
	_, _ = rand.Read(rnd[:])
	l := &Lab{
		topo:   topo,
		prefix: fmt.Sprintf("wpt-%d-%d%s-", os.Getpid(), n, hex.EncodeToString(rnd[:])),
		logf:   t.Logf,
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Logf("lab teardown: %v", err)
		}
	})
	if err := l.build(); err != nil {
		t.Fatalf("lab: %v", err)
	}
	return l
}

// missingPrivilege returns why the lab cannot run here, or "".
func missingPrivilege(needTUN bool) string {
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Sprintf("needs the %q command from iproute2 (%v)", tool, err)
		}
	}
	if needTUN {
		if _, err := os.Stat("/dev/net/tun"); err != nil {
			return fmt.Sprintf("the impairment router needs /dev/net/tun (%v)", err)
		}
	}
	// Probe: create and delete a namespace of our own.
	probe := fmt.Sprintf("wpt-%d-probe%d", os.Getpid(), labSeq.Add(1))
	out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput()
	if err != nil {
		why := "needs root or CAP_NET_ADMIN and CAP_SYS_ADMIN to create network namespaces"
		if os.Geteuid() == 0 {
			why = "cannot create network namespaces even as root"
		}
		return fmt.Sprintf("%s: ip netns add: %v: %s", why, err, strings.TrimSpace(string(out)))
	}
	_ = exec.Command("ip", "netns", "del", probe).Run()
	return ""
}

// reapStale deletes namespaces left by test processes that no longer run
// (killed before their cleanups could run).
func reapStale() {
	ents, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range ents {
		m := testNS.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == self {
			continue
		}
		if err := unix.Kill(pid, 0); err == nil || errors.Is(err, unix.EPERM) {
			continue // still running
		}
		_ = exec.Command("ip", "netns", "del", e.Name()).Run()
	}
}

// run runs a command and returns its output; the error carries the output.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func ip(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := run(ctx, "ip", args...)
	return err
}

// inNetns runs fn on an OS thread that has joined the network namespace at
// path. The thread is locked for the whole call and never unlocked, so the
// Go runtime ends it when fn returns instead of reusing a thread whose
// namespace changed. Sockets, TUN devices and /proc/sys/net files opened by
// fn belong to that namespace for good, wherever they are used afterwards.
// Goroutines started by fn run on other threads, outside the namespace.
func inNetns(path string, fn func() error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("lab: open netns: %w", err)
	}
	defer f.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: see above.
		defer func() {
			if p := recover(); p != nil {
				errc <- fmt.Errorf("lab: panic in namespace %s: %v", path, p)
			}
		}()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("lab: setns %s: %w", path, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

func nsPath(ns string) string {
	if strings.ContainsRune(ns, '/') {
		return ns
	}
	return filepath.Join("/run/netns", ns)
}

// writeSysctls writes key=value pairs (dotted keys) in the namespace ns.
// Keys listed in optional may be missing (IPv6 disabled in the kernel).
func writeSysctls(ns string, kv [][2]string, optional map[string]bool) error {
	return inNetns(nsPath(ns), func() error {
		for _, p := range kv {
			path := "/proc/sys/" + strings.ReplaceAll(p[0], ".", "/")
			if err := os.WriteFile(path, []byte(p[1]), 0o644); err != nil {
				if optional[p[0]] && errors.Is(err, os.ErrNotExist) {
					continue
				}
				return fmt.Errorf("lab: sysctl %s=%s in %s: %w", p[0], p[1], ns, err)
			}
		}
		return nil
	})
}

func baseSysctls(forwarder bool) ([][2]string, map[string]bool) {
	kv := [][2]string{
		// Keep IPv6 (router solicitations, DAD) out of the lab so that the
		// router's counters see only test traffic.
		{"net.ipv6.conf.all.disable_ipv6", "1"},
		{"net.ipv6.conf.default.disable_ipv6", "1"},
	}
	opt := map[string]bool{"net.ipv6.conf.all.disable_ipv6": true, "net.ipv6.conf.default.disable_ipv6": true}
	if forwarder {
		kv = append(kv,
			[2]string{"net.ipv4.ip_forward", "1"},
			[2]string{"net.ipv4.conf.all.forwarding", "1"},
			[2]string{"net.ipv4.conf.default.forwarding", "1"},
			[2]string{"net.ipv4.conf.all.rp_filter", "0"},
			[2]string{"net.ipv4.conf.default.rp_filter", "0"},
			[2]string{"net.ipv4.conf.all.send_redirects", "0"},
			[2]string{"net.ipv4.conf.default.send_redirects", "0"},
		)
	}
	return kv, opt
}

func ifaceTo(peer string) string { return "to-" + peer }

// build creates the namespaces, links, routes, shapes and router.
func (l *Lab) build() error {
	topo := l.topo
	l.hosts = map[string]*Host{}
	fw := map[string]bool{}
	for _, f := range topo.Forwarders {
		fw[f] = true
	}
	for _, name := range topo.Hosts {
		h := &Host{Name: name, NS: l.prefix + name, lab: l, addrs: map[string]netip.Addr{}, ifaces: map[string]string{}}
		if err := ip("netns", "add", h.NS); err != nil {
			return err
		}
		l.hosts[name] = h
		if err := ip("-n", h.NS, "link", "set", "lo", "up"); err != nil {
			return err
		}
		kv, opt := baseSysctls(fw[name])
		for k, v := range topo.Sysctls {
			kv = append(kv, [2]string{k, v})
		}
		if err := writeSysctls(h.NS, kv, opt); err != nil {
			return err
		}
	}
	for i, lk := range topo.Links {
		ha, hb := l.hosts[lk.A], l.hosts[lk.B]
		ia, ib := ifaceTo(lk.B), ifaceTo(lk.A)
		mtu := lk.MTU
		if mtu == 0 {
			mtu = 1500
		}
		if err := ip("-n", ha.NS, "link", "add", ia, "type", "veth", "peer", "name", ib, "netns", hb.NS); err != nil {
			return err
		}
		aa, ab := linkPrefix(i)
		for _, e := range []struct {
			h    *Host
			dev  string
			addr netip.Addr
			peer string
		}{{ha, ia, aa, lk.B}, {hb, ib, ab, lk.A}} {
			if err := ip("-n", e.h.NS, "addr", "add", netip.PrefixFrom(e.addr, 24).String(), "dev", e.dev); err != nil {
				return err
			}
			if err := ip("-n", e.h.NS, "link", "set", "dev", e.dev, "mtu", strconv.Itoa(mtu), "up"); err != nil {
				return err
			}
			e.h.addrs[e.peer] = e.addr
			e.h.ifaces[e.peer] = e.dev
			if !e.h.Addr.IsValid() {
				e.h.Addr = e.addr
			}
			if fw[e.h.Name] {
				if err := writeSysctls(e.h.NS, [][2]string{{"net.ipv4.conf." + e.dev + ".rp_filter", "0"}}, nil); err != nil {
					return err
				}
			}
		}
		shapes := lk.Shapes
		if lk.Shape != nil {
			shapes = append([]Shape{*lk.Shape}, shapes...)
		}
		for _, s := range shapes {
			on := l.hosts[s.On]
			peer := lk.B
			if s.On == lk.B {
				peer = lk.A
			}
			if err := applyShape(on.NS, on.ifaces[peer], s.withDefaults(mtu)); err != nil {
				return err
			}
		}
	}
	for _, rt := range topo.Routes {
		h, via := l.hosts[rt.Host], l.hosts[rt.Via]
		if err := ip("-n", h.NS, "route", "add", rt.To.String(), "via", via.addrs[rt.Host].String(), "dev", h.ifaces[rt.Via]); err != nil {
			return err
		}
	}
	// Default routes: a host that is not a forwarder routes through the
	// first forwarder it has a link to.
	for _, name := range topo.Hosts {
		if fw[name] {
			continue
		}
		h := l.hosts[name]
		for _, lk := range topo.Links {
			peer := ""
			if lk.A == name {
				peer = lk.B
			} else if lk.B == name {
				peer = lk.A
			}
			if peer == "" || !fw[peer] {
				continue
			}
			gw := l.hosts[peer].addrs[name]
			if err := ip("-n", h.NS, "route", "add", "default", "via", gw.String(), "dev", h.ifaces[peer]); err != nil {
				return err
			}
			break
		}
	}
	if rs := topo.Router; rs != nil {
		r, err := StartRouter(RouterConfig{
			NetNS:      l.hosts[rs.Host].NS,
			IfaceA:     l.hosts[rs.Host].ifaces[rs.A],
			IfaceB:     l.hosts[rs.Host].ifaces[rs.B],
			AtoB:       rs.AtoB,
			BtoA:       rs.BtoA,
			RandStart:  rs.RandStart,
			TxQueueLen: rs.TxQueueLen,
			Logf:       l.logf,
		})
		if err != nil {
			return err
		}
		l.router = r
	}
	return nil
}

func applyShape(ns, dev string, s Shape) error {
	rate := strconv.FormatFloat(s.Rate, 'f', 0, 64) + "bit"
	burst := strconv.Itoa(s.Burst)
	limit := strconv.Itoa(s.Limit)
	tc := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := run(ctx, "tc", append([]string{"-n", ns}, args...)...)
		return err
	}
	switch s.Qdisc {
	case "tbf":
		return tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf", "rate", rate, "burst", burst, "limit", limit)
	case "htb":
		def := "10"
		if s.Match != nil {
			def = "20"
		}
		if err := tc("qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", def); err != nil {
			return err
		}
		if err := tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb",
			"rate", rate, "ceil", rate, "burst", burst, "cburst", burst); err != nil {
			return err
		}
		if err := tc("qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:", "bfifo", "limit", limit); err != nil {
			return err
		}
		if s.Match == nil {
			return nil
		}
		// The rest of the traffic: a class that is, in practice, unlimited.
		if err := tc("class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb",
			"rate", "100gbit", "ceil", "100gbit"); err != nil {
			return err
		}
		args := []string{"filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32"}
		m := s.Match
		if m.Proto != 0 {
			args = append(args, "match", "ip", "protocol", strconv.Itoa(int(m.Proto)), "0xff")
		}
		if m.DstPort != 0 {
			args = append(args, "match", "ip", "dport", strconv.Itoa(int(m.DstPort)), "0xffff")
		}
		if m.SrcPort != 0 {
			args = append(args, "match", "ip", "sport", strconv.Itoa(int(m.SrcPort)), "0xffff")
		}
		if m.Proto == 0 && m.DstPort == 0 && m.SrcPort == 0 {
			args = append(args, "match", "u32", "0", "0")
		}
		return tc(append(args, "flowid", "1:10")...)
	}
	return fmt.Errorf("lab: unknown qdisc %q", s.Qdisc)
}

// Host returns the named host, or nil.
func (l *Lab) Host(name string) *Host { return l.hosts[name] }

// Router returns the in-process impairment router, or nil.
func (l *Lab) Router() *Router { return l.router }

// RouterStats returns the router's counters with the TUN devices' own
// counters filled in.
func (l *Lab) RouterStats() (RouterStats, error) {
	if l.router == nil {
		return RouterStats{}, errors.New("lab: no router")
	}
	return l.router.StatsWithLinks()
}

// QdiscStats returns the counters of every qdisc on dev in host, from
// `tc -s qdisc show dev DEV`.
func (l *Lab) QdiscStats(host, dev string) ([]QdiscStats, error) {
	h := l.hosts[host]
	if h == nil {
		return nil, fmt.Errorf("lab: no host %q", host)
	}
	return qdiscStats(h.NS, dev)
}

func qdiscStats(ns, dev string) ([]QdiscStats, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := run(ctx, "tc", "-n", ns, "-s", "qdisc", "show", "dev", dev)
	if err != nil {
		return nil, err
	}
	return ParseQdiscStats(string(out))
}

// LinkStats returns dev's counters in host, from `ip -s link`.
func (l *Lab) LinkStats(host, dev string) (LinkStats, error) {
	h := l.hosts[host]
	if h == nil {
		return LinkStats{}, fmt.Errorf("lab: no host %q", host)
	}
	return linkStats(h.NS, dev)
}

func linkStats(ns, dev string) (LinkStats, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := run(ctx, "ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev)
	if err != nil {
		return LinkStats{}, err
	}
	return ParseLinkStats(out)
}

// Close stops the router, kills every process left in the lab's
// namespaces and deletes the namespaces. It is idempotent.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	if l.router != nil {
		if err := l.router.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	var names []string
	for _, name := range l.topo.Hosts {
		names = append(names, l.prefix+name)
	}
	if err := deleteNamespaces(names); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deleteNamespaces kills the processes inside each namespace (never this
// process) and deletes it. Missing namespaces are not an error.
func deleteNamespaces(names []string) error {
	var errs []error
	self := os.Getpid()
	for _, ns := range names {
		if _, err := os.Stat(nsPath(ns)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, _ := run(ctx, "ip", "netns", "pids", ns)
		cancel()
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != self && pid > 1 {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		var err error
		for try := 0; try < 5; try++ {
			if err = ip("netns", "del", ns); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Command returns a command that runs name with args inside the host's
// namespace (through `ip netns exec`, which also mounts the namespace's
// /sys). Processes still running when the lab is torn down are killed.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Run runs a command inside the host and returns its standard output; on
// failure the error includes standard error.
func (h *Host) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return run(ctx, "ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Do runs fn on an OS thread inside the host's network namespace and
// returns its error (a panic in fn becomes an error). Sockets that fn opens
// stay in the namespace after Do returns and can be used from any
// goroutine; goroutines that fn starts are not in the namespace.
func (h *Host) Do(fn func() error) error { return inNetns(nsPath(h.NS), fn) }

// Listen opens a listener inside the host. lc may be nil.
func (h *Host) Listen(ctx context.Context, lc *net.ListenConfig, network, address string) (net.Listener, error) {
	if lc == nil {
		lc = &net.ListenConfig{}
	}
	var ln net.Listener
	err := h.Do(func() (err error) {
		ln, err = lc.Listen(ctx, network, address)
		return err
	})
	return ln, err
}

// ListenPacket opens a packet socket inside the host. lc may be nil.
func (h *Host) ListenPacket(ctx context.Context, lc *net.ListenConfig, network, address string) (net.PacketConn, error) {
	if lc == nil {
		lc = &net.ListenConfig{}
	}
	var pc net.PacketConn
	err := h.Do(func() (err error) {
		pc, err = lc.ListenPacket(ctx, network, address)
		return err
	})
	return pc, err
}

// Dial connects from inside the host. d may be nil.
func (h *Host) Dial(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{}
	}
	var c net.Conn
	err := h.Do(func() (err error) {
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// AddrOn returns the host's address on its link to peer.
func (h *Host) AddrOn(peer string) netip.Addr { return h.addrs[peer] }

// Iface returns the host's interface toward peer ("to-" + peer).
func (h *Host) Iface(peer string) string { return h.ifaces[peer] }

// Sysctl writes a per-namespace sysctl (dotted key) inside the host.
func (h *Host) Sysctl(key, value string) error {
	return writeSysctls(h.NS, [][2]string{{key, value}}, nil)
}

// ReadSysctl reads a sysctl (dotted key) inside the host.
func (h *Host) ReadSysctl(key string) (string, error) {
	var v []byte
	err := h.Do(func() (err error) {
		v, err = os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
		return err
	})
	return strings.TrimSpace(string(v)), err
}

// UDPStats returns the host's Udp counters from /proc/net/snmp (InErrors,
// RcvbufErrors and so on), read inside its namespace.
func (h *Host) UDPStats() (map[string]uint64, error) {
	var text []byte
	err := h.Do(func() (err error) {
		// /proc/net is /proc/self/net, which follows the reading thread's
		// namespace only through /proc/thread-self.
		text, err = os.ReadFile("/proc/thread-self/net/snmp")
		return err
	})
	if err != nil {
		return nil, err
	}
	return parseSNMP(string(text), "Udp")
}
