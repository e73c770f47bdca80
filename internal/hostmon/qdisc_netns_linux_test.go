package hostmon_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/lab"
)

// TestReadRootQdiscInNamespace builds two namespaces joined by a veth pair
// (the lab's, removed in t.Cleanup), puts tbf at the root of one end and
// reads each address's interface and root qdisc from inside the namespace
// that holds it.
func TestReadRootQdiscInNamespace(t *testing.T) {
	l := lab.New(t, lab.Topology{Hosts: []string{"a", "b"}, Links: []lab.Link{{A: "a", B: "b"}}})
	a, b := l.Host("a"), l.Host("b")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dev := a.Iface("b")
	if _, err := a.Run(ctx, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
		"rate", "1mbit", "burst", "32kbit", "latency", "400ms"); err != nil {
		t.Fatal(err)
	}
	read := func(h *lab.Host, addr netip.Addr) hostmon.RootQdisc {
		t.Helper()
		var q hostmon.RootQdisc
		if err := h.Do(func() (err error) { q, err = hostmon.ReadRootQdisc(addr); return err }); err != nil {
			t.Fatalf("in %s, %v: %v", h.Name, addr, err)
		}
		return q
	}
	if got, want := read(a, a.AddrOn("b")), (hostmon.RootQdisc{Interface: dev, Kind: "tbf"}); got != want {
		t.Errorf("shaped end: %+v, want %+v", got, want)
	}
	if got, want := read(b, b.AddrOn("a")), (hostmon.RootQdisc{Interface: b.Iface("a"), Kind: hostmon.NoQueue}); got != want {
		t.Errorf("veth without a qdisc of its own: %+v, want %+v", got, want)
	}
	if got, want := read(a, netip.MustParseAddr("127.0.0.1")), (hostmon.RootQdisc{Interface: "lo", Kind: hostmon.NoQueue}); got != want {
		t.Errorf("loopback: %+v, want %+v", got, want)
	}
	// The namespace's addresses are not the host's.
	if q, err := hostmon.ReadRootQdisc(a.AddrOn("b")); err == nil {
		t.Errorf("outside the namespace, %v is on %+v", a.AddrOn("b"), q)
	}
}
