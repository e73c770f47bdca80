package lab

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/units"
)

// MaxSenders bounds a many-senders lab: one /24 per access link.
const MaxSenders = 32

// AccessBurst is the least token bucket of a sender's access link: a
// 64 KiB GSO packet with its Ethernet header, and some room.
const AccessBurst = 66 << 10

// Route is a static route a topology adds in one host: To (a prefix)
// through Via's address on its link to Host.
type Route struct {
	Host string
	To   netip.Prefix
	Via  string
}

// SenderName is the i-th sender of a many-senders lab (1-based): a1, a2…
func SenderName(i int) string { return fmt.Sprintf("a%d", i) }

// Senders is the many-senders lab: senders a1…aN, each with its own access
// link to the aggregation host s, and s ─ r ─ b, the impairment router in
// r between s and b applying path (toward b) and back (toward the
// senders). All senders share the router's path to b.
//
// An access link with a rate (bit/s, 0 for none) is capped in both
// directions: toward s on the sender's own interface, as a host's network
// card caps what it sends (TCP feels it as back-pressure, never as loss),
// and toward the sender on s's egress, where a queue builds and drops.
func Senders(n int, accessRate float64, mtu int, sysctls map[string]string, path, back impair.Config) (Topology, error) {
	if n < 1 || n > MaxSenders {
		return Topology{}, fmt.Errorf("lab: %d senders: want 1 to %d", n, MaxSenders)
	}
	t := Topology{Forwarders: []string{"s", "r"}, Sysctls: sysctls}
	for i := 1; i <= n; i++ {
		a := SenderName(i)
		t.Hosts = append(t.Hosts, a)
		lk := Link{A: a, B: "s", MTU: mtu}
		if accessRate > 0 {
			// The sender's own shape holds a whole GSO packet in its
			// bucket: a smaller burst makes tbf cut each into wire
			// packets, which s forwards one by one, and the router then
			// reads and writes every packet alone instead of whole
			// super-packets (at 1 Gbit/s it fell behind by 10-15% of a
			// group test, where uncapped access links cost it nothing).
			lk.Shape = &Shape{On: a, Rate: accessRate, Burst: max(AccessBurst, int(accessRate/8/1000))}
			lk.Shapes = []Shape{{On: "s", Rate: accessRate}}
		}
		t.Links = append(t.Links, lk)
		// r reaches each access link through s.
		first, _ := linkPrefix(i - 1)
		t.Routes = append(t.Routes, Route{Host: "r", To: netip.PrefixFrom(first, 24).Masked(), Via: "s"})
	}
	t.Hosts = append(t.Hosts, "s", "r", "b")
	t.Links = append(t.Links, Link{A: "s", B: "r", MTU: mtu}, Link{A: "r", B: "b", MTU: mtu})
	// s sends everything else toward r.
	t.Routes = append(t.Routes, Route{Host: "s", To: netip.MustParsePrefix("0.0.0.0/0"), Via: "r"})
	t.Router = &RouterSpec{Host: "r", A: "s", B: "b", AtoB: path, BtoA: back}
	return t, t.Validate()
}

// AccessStats are one access link's counters, read on s's end of it: Rx
// is what the sender sent toward b, Tx what came back to it.
type AccessStats struct {
	Sender string    `json:"sender"`
	Link   LinkStats `json:"link"`
}

// topology is the persistent lab's topology and the router's A side,
// without the in-process router (Up runs it as a process of its own).
func (c Config) topology(mtu int) (Topology, string, error) {
	if c.Senders == 0 {
		return Chain(mtu, c.TCPBuffers.Sysctls()), "a", nil
	}
	if c.AccessRate < 0 || c.AccessRate > 400e9 || (c.AccessRate > 0 && c.AccessRate < 8000) {
		return Topology{}, "", fmt.Errorf("lab: access rate %v bit/s out of range", c.AccessRate)
	}
	atob, btoa := c.Directions()
	t, err := Senders(c.Senders, c.AccessRate, mtu, c.TCPBuffers.Sysctls(), atob, btoa)
	t.Router = nil
	return t, "s", err
}

// senderSteps is NextSteps for a many-senders lab.
func (i *Info) senderSteps(prog string) string {
	var b strings.Builder
	var senders []string
	for n := 1; n <= i.Senders; n++ {
		senders = append(senders, fmt.Sprintf("%s (%s)", SenderName(n), i.Addrs[SenderName(n)]))
	}
	access := "uncapped"
	if i.AccessRate > 0 {
		access = units.RateString(i.AccessRate)
	}
	fmt.Fprintf(&b, "lab %q is up: %s, each on its own access link (%s) ─ s ─ r ─ b (%s), MTU %d, rand-start %d\n",
		i.Name, strings.Join(senders, ", "), access, i.Addrs["b"], i.MTU, i.RandStart)
	fmt.Fprintf(&b, "  path s→b: %s\n  back b→s: %s\n", settingsText(i.AtoB), settingsText(i.BtoA))
	fmt.Fprintf(&b, "  TCP buffers: %s\n", i.TCPBuffers.Text())
	fmt.Fprintf(&b, "next (K: a key file, `name key`, mode 600):\n")
	fmt.Fprintf(&b, "  %s lab exec %s b -- %s -s\n", prog, i.Name, prog)
	var pairs []string
	for n := 1; n <= i.Senders; n++ {
		a := SenderName(n)
		fmt.Fprintf(&b, "  %s lab exec %s %s -- %s server --agent --agent-key-file K\n", prog, i.Name, a, prog)
		pairs = append(pairs, fmt.Sprintf("--pair %s,%s", i.Addrs[a], i.Addrs["b"]))
	}
	fmt.Fprintf(&b, "  %s lab exec %s s -- %s group %s -t 10 --agent-key-file K\n", prog, i.Name, prog, strings.Join(pairs, " "))
	fmt.Fprintf(&b, "  %s lab status %s\n", prog, i.Name)
	fmt.Fprintf(&b, "  %s lab down %s\n", prog, i.Name)
	return b.String()
}

// IsHostName says whether h may name a host of a persistent lab: a, b, r,
// s or a sender a1…a32.
func IsHostName(h string) bool {
	switch h {
	case "a", "b", "r", "s":
		return true
	}
	for n := 1; n <= MaxSenders; n++ {
		if h == SenderName(n) {
			return true
		}
	}
	return false
}

// persistHosts are the hosts a persistent lab may have, for clean-up when
// its state file is gone.
func persistHosts() []string {
	hosts := []string{"a", "r", "b", "s"}
	for n := 1; n <= MaxSenders; n++ {
		hosts = append(hosts, SenderName(n))
	}
	return hosts
}
