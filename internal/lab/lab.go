// Package lab builds wireperf's impairment lab: test hosts as Linux network
// namespaces joined by veth pairs, links shaped with tbf or htb, and a
// user-space WAN emulator (the impairment router) with exact counters that
// serve as ground truth for wireperf's own figures.
//
// # Topology
//
// A Topology lists hosts (each a network namespace), links (each a veth
// pair, one /24 from 10.77.0.0/16 per link, .1 on the first end and .2 on
// the second) and the hosts that forward. Addresses exist only inside the
// namespaces. A host whose link leads to a forwarder gets a default route
// through it, which is all a line such as a ─ r ─ b needs; Chain builds
// that line.
//
// # Shaping
//
// A link may carry a rate limit (tbf, or htb with an optional u32 filter
// that puts only the test traffic into the limited class). Put it on a
// forwarding host's egress, never on the sending host's own veth: a qdisc
// on the sender pushes back on the sender's socket (TCP small queues) and
// never drops, which is nothing like a real bottleneck. QdiscStats reads the
// qdisc's sent and dropped counters (tc -s qdisc) as a second ground truth.
//
// # The impairment router
//
// With Topology.Router set, the forwarding host r runs the router: in r,
// policy routing sends what arrives from a (and from b) into a TUN device;
// the router reads each packet, passes it through an impair.Direction
// (loss, Gilbert-Elliott bursts, rate cap, duplication, delay and jitter,
// re-ordering) and writes it into the other TUN device, where the kernel
// receives it and forwards it on by the main table. See Router for the
// details and measured capacity, and RunRouter for running it.
//
// # Lifetime
//
// New ties a lab to a test: it skips the test when the process may not
// create namespaces, names everything uniquely (the test process's pid is
// part of every namespace name, so parallel tests never collide and the
// left-overs of a killed test run are removed by the next New), and tears
// everything down in t.Cleanup, which runs after a failure or a panic too.
// Up, Status, Exec and Down manage a named lab that outlives the process,
// for `wireperf lab up|status|exec|down`.
package lab

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// ErrNeedsLinux is returned on systems without Linux network namespaces.
var ErrNeedsLinux = errors.New("the lab needs Linux network namespaces")

// TB is the part of testing.TB that New uses. *testing.T and *testing.B
// satisfy it.
type TB interface {
	Helper()
	Name() string
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Topology describes a lab.
type Topology struct {
	// Hosts are the namespaces to create. A name is 1-12 characters of
	// [a-z0-9]; it also names the peer's interface ("to-" + name).
	Hosts []string
	// Links are veth pairs between hosts. At most one link joins two hosts.
	Links []Link
	// Forwarders have IPv4 forwarding on and reverse-path filtering off.
	Forwarders []string
	// Sysctls are written in every host, for example
	// "net.ipv4.tcp_rmem": "4096 131072 67108864". Only per-namespace
	// settings belong here; global ones (net.core.rmem_max) are refused by
	// the kernel inside a namespace or, worse, change the whole machine.
	Sysctls map[string]string
	// Router, when set, runs the impairment router in-process on one
	// forwarding host between two of its links.
	Router *RouterSpec
	// Routes are static routes added once the links are up (Senders).
	Routes []Route
}

// Link is a veth pair between hosts A and B.
type Link struct {
	A, B  string
	MTU   int    // 0 means 1500
	Shape *Shape // nil for none
	// Shapes are further shapes on the link, such as the other end's
	// egress (Senders caps an access link both ways).
	Shapes []Shape
}

// Shape rate-limits one end's egress on a link.
type Shape struct {
	// On is the host whose egress is shaped: A or B of the link. Make it a
	// forwarder (see the package doc).
	On string
	// Qdisc is "tbf" (the default) or "htb".
	Qdisc string
	// Rate in bit/s. tbf and htb count each packet's bytes from the
	// Ethernet header on, without preamble, FCS or gap: see FramingTC.
	Rate float64
	// Burst is the token bucket in bytes; 0 means 1 ms at Rate, and at
	// least two frames.
	Burst int
	// Limit is the queue in bytes; 0 means 20 ms at Rate, at least 64 KiB.
	Limit int
	// Match (htb only) limits just the matching traffic; the rest goes to
	// an unlimited default class. nil limits everything.
	Match *Match
}

// Match selects IPv4 packets for a u32 filter. Zero fields match anything.
type Match struct {
	Proto   uint8  // IP protocol: 6 TCP, 17 UDP
	DstPort uint16 // destination port
	SrcPort uint16 // source port
}

// RouterSpec places the impairment router on a host of a Topology.
type RouterSpec struct {
	Host      string // the forwarding host, usually "r"
	A, B      string // its neighbours: traffic from A is impaired by AtoB, from B by BtoA
	AtoB      impair.Config
	BtoA      impair.Config
	RandStart uint64
	// TxQueueLen of the TUN devices; 0 means DefaultTxQueueLen.
	TxQueueLen int
}

// Chain returns the line a ─ r ─ b with r forwarding, every link at mtu
// (0 means 1500), and the sysctls given applied in every host.
func Chain(mtu int, sysctls map[string]string) Topology {
	return Topology{
		Hosts:      []string{"a", "r", "b"},
		Links:      []Link{{A: "a", B: "r", MTU: mtu}, {A: "r", B: "b", MTU: mtu}},
		Forwarders: []string{"r"},
		Sysctls:    sysctls,
	}
}

// BigTCPBuffers are per-namespace sysctls that let TCP autotuning grow
// windows to 128 MiB, enough for 1 Gbit/s at 500 ms. They leave the global
// net.core.rmem_max and wmem_max alone (explicit SO_RCVBUF/SO_SNDBUF stay
// capped by those).
func BigTCPBuffers() map[string]string {
	return map[string]string{
		"net.ipv4.tcp_rmem": "4096 131072 134217728",
		"net.ipv4.tcp_wmem": "4096 16384 134217728",
	}
}

// StockTCPBuffers are stock Linux's TCP autotuning limits, as Debian 12
// and most distributions ship them: a receive buffer of up to 6 MiB and a
// send buffer of up to 4 MiB. Written explicitly, since a new namespace's
// defaults depend on the machine's memory.
func StockTCPBuffers() map[string]string {
	return map[string]string{
		"net.ipv4.tcp_rmem": "4096 131072 6291456",
		"net.ipv4.tcp_wmem": "4096 16384 4194304",
	}
}

// TCPBuffers names the TCP autotuning limits of a persistent lab's hosts:
// the one host setting that decides what a single stream reaches on a
// long fat path.
type TCPBuffers string

const (
	// BuffersStock is StockTCPBuffers: what a host runs unless someone
	// tuned it, and so the default.
	BuffersStock TCPBuffers = "stock"
	// BuffersBig is BigTCPBuffers: a tuned host.
	BuffersBig TCPBuffers = "big"
)

// ParseTCPBuffers reads a --tcp-buffers value.
func ParseTCPBuffers(s string) (TCPBuffers, error) {
	switch b := TCPBuffers(s); b {
	case BuffersStock, BuffersBig:
		return b, nil
	}
	return "", fmt.Errorf("--tcp-buffers %q: want stock (Linux's 6 MiB receive, 4 MiB send) or big (128 MiB each)", s)
}

// Sysctls are the buffers' per-namespace settings; "" is BuffersStock.
func (b TCPBuffers) Sysctls() map[string]string {
	if b == BuffersBig {
		return BigTCPBuffers()
	}
	return StockTCPBuffers()
}

// Text says which buffers, with the sysctls' values, for people. A lab
// whose state predates the choice ("" in its state) had BigTCPBuffers.
func (b TCPBuffers) Text() string {
	switch b {
	case BuffersStock:
		s := StockTCPBuffers()
		return fmt.Sprintf("stock Linux (tcp_rmem %s, tcp_wmem %s)", s["net.ipv4.tcp_rmem"], s["net.ipv4.tcp_wmem"])
	case BuffersBig, "":
		s := BigTCPBuffers()
		return fmt.Sprintf("big, 128 MiB (tcp_rmem %s, tcp_wmem %s)", s["net.ipv4.tcp_rmem"], s["net.ipv4.tcp_wmem"])
	}
	return string(b)
}

var hostName = regexp.MustCompile(`^[a-z0-9]{1,12}$`)

// Validate checks names, references and settings.
func (t Topology) Validate() error {
	if len(t.Hosts) == 0 {
		return errors.New("lab: topology has no hosts")
	}
	hosts := map[string]bool{}
	for _, h := range t.Hosts {
		if !hostName.MatchString(h) {
			return fmt.Errorf("lab: host name %q is not 1-12 characters of [a-z0-9]", h)
		}
		if hosts[h] {
			return fmt.Errorf("lab: host %q listed twice", h)
		}
		hosts[h] = true
	}
	pairs := map[[2]string]bool{}
	for _, l := range t.Links {
		if !hosts[l.A] || !hosts[l.B] || l.A == l.B {
			return fmt.Errorf("lab: link %s-%s must join two different listed hosts", l.A, l.B)
		}
		k := [2]string{min(l.A, l.B), max(l.A, l.B)}
		if pairs[k] {
			return fmt.Errorf("lab: two links between %s and %s", l.A, l.B)
		}
		pairs[k] = true
		if l.MTU != 0 && (l.MTU < 576 || l.MTU > 65535) {
			return fmt.Errorf("lab: link %s-%s: MTU %d out of range [576, 65535]", l.A, l.B, l.MTU)
		}
		shapes := l.Shapes
		if l.Shape != nil {
			shapes = append([]Shape{*l.Shape}, shapes...)
		}
		for _, s := range shapes {
			if s.On != l.A && s.On != l.B {
				return fmt.Errorf("lab: link %s-%s: shape.On %q is not an end of the link", l.A, l.B, s.On)
			}
			if s.Qdisc != "" && s.Qdisc != "tbf" && s.Qdisc != "htb" {
				return fmt.Errorf("lab: link %s-%s: qdisc %q is not tbf or htb", l.A, l.B, s.Qdisc)
			}
			if s.Rate < 8000 || s.Rate > 400e9 {
				return fmt.Errorf("lab: link %s-%s: rate %v bit/s out of range", l.A, l.B, s.Rate)
			}
			if s.Match != nil && s.Qdisc != "htb" {
				return fmt.Errorf("lab: link %s-%s: a match needs qdisc htb", l.A, l.B)
			}
			if s.Burst < 0 || s.Limit < 0 {
				return fmt.Errorf("lab: link %s-%s: negative burst or limit", l.A, l.B)
			}
		}
	}
	fw := map[string]bool{}
	for _, f := range t.Forwarders {
		if !hosts[f] {
			return fmt.Errorf("lab: forwarder %q is not a host", f)
		}
		fw[f] = true
	}
	for _, r := range t.Routes {
		if !pairs[[2]string{min(r.Host, r.Via), max(r.Host, r.Via)}] || !r.To.IsValid() {
			return fmt.Errorf("lab: route in %s to %v via %s: want a prefix and a host linked to %s", r.Host, r.To, r.Via, r.Host)
		}
	}
	if r := t.Router; r != nil {
		if !fw[r.Host] {
			return fmt.Errorf("lab: router host %q must be a forwarder", r.Host)
		}
		for _, n := range []string{r.A, r.B} {
			if !pairs[[2]string{min(n, r.Host), max(n, r.Host)}] {
				return fmt.Errorf("lab: router host %q has no link to %q", r.Host, n)
			}
		}
		if r.A == r.B {
			return errors.New("lab: router A and B must differ")
		}
		if err := r.AtoB.Validate(); err != nil {
			return fmt.Errorf("lab: router a→b: %w", err)
		}
		if err := r.BtoA.Validate(); err != nil {
			return fmt.Errorf("lab: router b→a: %w", err)
		}
	}
	return nil
}

// shapeDefaults fills Burst and Limit.
func (s Shape) withDefaults(mtu int) Shape {
	if s.Qdisc == "" {
		s.Qdisc = "tbf"
	}
	if s.Burst == 0 {
		s.Burst = max(int(s.Rate/8/1000), 2*(mtu+14))
	}
	if s.Limit == 0 {
		s.Limit = max(int(s.Rate/8*0.02), 64<<10, 2*(mtu+14))
	}
	return s
}

// linkPrefix is the /24 of link i (0-based): 10.77.(i+1).0/24.
func linkPrefix(i int) (first, second netip.Addr) {
	b := byte(i + 1)
	return netip.AddrFrom4([4]byte{10, 77, b, 1}), netip.AddrFrom4([4]byte{10, 77, b, 2})
}

// Framing is what a link layer adds to each IP packet, in bytes, for rate
// arithmetic.
type Framing struct {
	Name     string
	Overhead int
}

var (
	// FramingTC is what Linux tbf and htb count on an Ethernet or veth
	// device: the 14-byte Ethernet header, without FCS, preamble or gap.
	// A 1500-byte IP packet is a 1514-byte frame to them.
	FramingTC = Framing{Name: "tc", Overhead: 14}
	// FramingEthernet is real Ethernet on the wire: header 14, FCS 4,
	// preamble 8 and inter-frame gap 12, so 38 bytes per packet.
	FramingEthernet = Framing{Name: "ethernet", Overhead: 38}
	// FramingIP counts IP packets only (the impairment router's rate cap
	// with Overhead 0).
	FramingIP = Framing{Name: "ip", Overhead: 0}
)

// TCPHeaderBytes is the IPv4 and TCP header with the timestamp option, as
// Linux sends it by default: 20 + 20 + 12.
const TCPHeaderBytes = 52

// TCPGoodput predicts the best TCP goodput, in bit/s, on a link of rate
// bit/s with the given MTU and framing: each full segment carries
// MTU − 52 bytes of payload (IPv4, TCP, timestamps) and costs
// MTU + framing.Overhead bytes of the rate. For 1 Gbit/s and a 1500 MTU that
// is 1448/1538 × 10^9 ≈ 941 Mbit/s on Ethernet and 1448/1514 × 10^9 ≈ 956
// Mbit/s under tbf or htb. It ignores ACKs (they flow the other way) and
// slow start.
func TCPGoodput(rate float64, mtu int, framing Framing) float64 {
	return Goodput(rate, mtu, TCPHeaderBytes, framing)
}

// Goodput is TCPGoodput for any per-packet header size: payload
// MTU − headerBytes per MTU + framing.Overhead bytes on the link.
func Goodput(rate float64, mtu, headerBytes int, framing Framing) float64 {
	if mtu <= headerBytes || rate <= 0 {
		return 0
	}
	return rate * float64(mtu-headerBytes) / float64(mtu+framing.Overhead)
}

// LinkStats are a network device's counters, from `ip -s link`.
type LinkStats struct {
	RxPackets uint64 `json:"rx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	RxErrors  uint64 `json:"rx_errors"`
	RxDropped uint64 `json:"rx_dropped"`
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
	TxErrors  uint64 `json:"tx_errors"`
	TxDropped uint64 `json:"tx_dropped"` // on a TUN device: packets the kernel dropped because the reader was behind
}

// DirStats are the router's figures for one direction.
type DirStats struct {
	impair.Counters
	ReadErrors  uint64 `json:"read_errors"`  // failed reads from the input TUN device
	WriteErrors uint64 `json:"write_errors"` // packets the output TUN device refused (lost, and counted here)
	Oversize    uint64 `json:"oversize"`     // packets longer than the TUN MTU (dropped)
	Writes      uint64 `json:"writes"`       // write calls (a write may carry many segments of a TCP super-packet)
	// TunIn and TunOut are the TUN devices' own counters, when read (the
	// device the direction's packets are read from and the one they are
	// written into). TunIn.TxDropped counts packets the kernel dropped
	// because its queue in front of the router was full.
	TunIn  *LinkStats `json:"tun_in,omitempty"`
	TunOut *LinkStats `json:"tun_out,omitempty"`
}

// Lost is every packet of the direction that entered the TUN device and
// did not leave the router: the emulator's drops, refused writes, oversize
// packets and the kernel's TUN queue drops (when TunIn is known).
func (d DirStats) Lost() uint64 {
	n := d.Dropped() + d.WriteErrors + d.Oversize
	if d.TunIn != nil {
		n += d.TunIn.TxDropped
	}
	return n
}

// RouterStats are the router's counters for both directions.
type RouterStats struct {
	AtoB DirStats `json:"a_to_b"`
	BtoA DirStats `json:"b_to_a"`
}

// Name rules for persistent labs.
var labName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,19}$`)

func checkName(name string) error {
	if !labName.MatchString(name) {
		return fmt.Errorf("lab: name %q is not 1-20 characters of [a-z0-9-] starting with a letter or digit", name)
	}
	return nil
}

// Config describes a persistent lab made by Up: a ─ r ─ b with the
// impairment router in r.
type Config struct {
	RTT       time.Duration // round-trip delay; each direction gets half
	Jitter    time.Duration // per direction
	Rate      float64       // rate cap per direction, bit/s; 0 for none
	Loss      float64       // per direction, 0..1
	Reorder   float64       // per direction, 0..1
	MTU       int           // 0 means 1500
	RandStart uint64        // 0 picks one from the clock (shown in Status)
	// AtoB and BtoA, when not nil, replace the per-direction settings built
	// from the fields above.
	AtoB, BtoA *impair.Config
	// RouterCommand runs the router process; it gets "--name NAME"
	// appended. Empty means [this executable, "lab", "router"].
	RouterCommand []string
	// Senders, when set, builds the many-senders lab instead of a ─ r ─ b:
	// senders a1…aN, each on its own access link of AccessRate bit/s
	// (0: uncapped), sharing the router's path to b (Senders).
	Senders    int
	AccessRate float64
	// TCPBuffers are the hosts' TCP autotuning limits ("" is
	// BuffersStock).
	TCPBuffers TCPBuffers
}

// Directions turns the simple settings into the two per-direction configs.
// The rate cap counts real Ethernet framing (FramingEthernet), so a 1g cap
// behaves like a gigabit line: TCP tops out near 941 Mbit/s.
func (c Config) Directions() (atob, btoa impair.Config) {
	one := impair.Config{
		Delay:   c.RTT / 2,
		Jitter:  c.Jitter,
		Loss:    c.Loss,
		Reorder: c.Reorder,
		Rate:    c.Rate,
	}
	if c.Jitter > 0 {
		one.KeepOrder = true
	}
	if c.Rate > 0 {
		one.Overhead = FramingEthernet.Overhead
		// A queue of 50 ms at the rate, at least 64 KiB.
		one.QueueLimit = max(int(c.Rate/8*0.05), 64<<10)
	}
	atob, btoa = one, one
	if c.AtoB != nil {
		atob = *c.AtoB
	}
	if c.BtoA != nil {
		btoa = *c.BtoA
	}
	return atob, btoa
}

// Info describes a persistent lab.
type Info struct {
	Name       string            `json:"name"`
	Namespaces map[string]string `json:"namespaces"` // host → namespace
	Addrs      map[string]string `json:"addrs"`      // host → IPv4 address
	AtoB       string            `json:"a_to_b"`     // impair.Config.String()
	BtoA       string            `json:"b_to_a"`
	RandStart  uint64            `json:"rand_start"`
	MTU        int               `json:"mtu"`
	RouterPID  int               `json:"router_pid"`
	StatusFile string            `json:"status_file"`
	LogFile    string            `json:"log_file"`
	Senders    int               `json:"senders,omitempty"`
	AccessRate float64           `json:"access_rate_bps,omitempty"`
	// TCPBuffers are the hosts' TCP autotuning limits; absent in the
	// state of a lab made before the choice, which had BuffersBig.
	TCPBuffers TCPBuffers `json:"tcp_buffers,omitempty"`
}

// NextSteps is what `wireperf lab up` prints: the commands to type next.
// prog is the command name to show ("wireperf" when empty).
func (i *Info) NextSteps(prog string) string {
	if prog == "" {
		prog = "wireperf"
	}
	if i.Senders > 0 {
		return i.senderSteps(prog)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lab %q is up: a (%s) ─ r ─ b (%s), MTU %d, rand-start %d\n", i.Name, i.Addrs["a"], i.Addrs["b"], i.MTU, i.RandStart)
	fmt.Fprintf(&b, "  a→b: %s\n  b→a: %s\n", settingsText(i.AtoB), settingsText(i.BtoA))
	fmt.Fprintf(&b, "  TCP buffers: %s\n", i.TCPBuffers.Text())
	fmt.Fprintf(&b, "next:\n")
	fmt.Fprintf(&b, "  %s lab exec %s b -- %s -s\n", prog, i.Name, prog)
	fmt.Fprintf(&b, "  %s lab exec %s a -- %s -c %s\n", prog, i.Name, prog, i.Addrs["b"])
	fmt.Fprintf(&b, "  %s lab status %s\n", prog, i.Name)
	fmt.Fprintf(&b, "  %s lab down %s\n", prog, i.Name)
	return b.String()
}

// State is a persistent lab's state, as Status returns it. (The function
// takes the name Status, so the type is State.)
type State struct {
	Info
	Running bool      `json:"running"` // the router process is alive
	Updated time.Time `json:"updated"` // when the router last wrote its counters
	// Since is when the router started counting (zero when its status
	// file predates the field).
	Since  time.Time   `json:"since,omitzero"`
	Router RouterStats `json:"router"`
	// Access are the access links' counters in a many-senders lab.
	Access []AccessStats `json:"access,omitempty"`
}

// routerStatus is what the router writes to its status file.
type routerStatus struct {
	PID     int         `json:"pid"`
	Started time.Time   `json:"started,omitzero"` // when the router started counting
	Updated time.Time   `json:"updated"`
	Stats   RouterStats `json:"stats"`
}
