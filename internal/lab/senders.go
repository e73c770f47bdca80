package lab

import (
	"fmt"
	"net/netip"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// MaxSenders bounds a many-senders lab: one /24 per access link.
const MaxSenders = 32

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
			lk.Shape = &Shape{On: a, Rate: accessRate}
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
