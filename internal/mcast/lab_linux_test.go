package mcast

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/mcast/mcasttest"
)

const dropRules = `table bridge mc39 {
	chain forward {
		type filter hook forward priority 0; policy accept;
		oifname "p3" udp dport 5009 @ih,24,8 & 0x0f == 0x07 counter drop
	}
}
`

const countRules = `table netdev mc39 {
	chain in {
		type filter hook ingress device "eth0" priority 0; policy accept;
		udp dport 5009 counter
	}
}
`

var nftDropped = regexp.MustCompile(`counter packets (\d+)`)

// TestLabThreeReceivers is the multicast lab: a sender and three
// receivers, each host a namespace of its own, joined by a bridge in a
// fifth (IGMP snooping on, as the kernel's default). The bridge's port
// towards the third receiver drops one datagram in 16 by its number, so
// that receiver loses 94 datagrams and the other two lose none.
// Each receiver's counts are checked against its interface's: the test's
// datagrams that crossed it (an nftables counter on its ingress hook)
// are what it counted as received, and all that crossed it (ip -s link)
// is that and a few others (IGMP reports the bridge floods); its loss is
// what the sender sent less that, and the bridge's drops are the third
// one's loss.
//
// In IPv6 the hosts' own neighbour discovery and MLD reports cross the
// bridge too (fewer with no link-local addresses and no router
// solicitations), so the bound on the other packets is wider.
func TestLabThreeReceivers(t *testing.T) {
	mcasttest.NeedRoot(t)
	t.Run("IPv4", func(t *testing.T) { labThreeReceivers(t, false) })
	t.Run("IPv6", func(t *testing.T) { labThreeReceivers(t, true) })
}

func labThreeReceivers(t *testing.T, v6 bool) {
	br := mcasttest.NewNetns(t)
	// No IPv6 anywhere: the bridge's own MLD and router solicitations
	// would reach every port and cloud the interface counters.
	mcasttest.Run(t, "ip", "netns", "exec", br, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
	mcasttest.Run(t, "ip", "-n", br, "link", "add", "br0", "type", "bridge")
	mcasttest.Run(t, "ip", "-n", br, "link", "set", "br0", "up")
	hosts := make([]string, 4) // the sender, then the receivers
	for i := range hosts {
		ns := mcasttest.NewNetns(t)
		hosts[i] = ns
		port := fmt.Sprintf("p%d", i)
		mcasttest.Run(t, "ip", "-n", br, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns)
		mcasttest.Run(t, "ip", "-n", br, "link", "set", port, "master", "br0", "up")
		if !v6 {
			mcasttest.Run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
			mcasttest.Run(t, "ip", "-n", ns, "addr", "add", fmt.Sprintf("10.39.9.%d/24", i+1), "dev", "eth0")
		} else {
			mcasttest.Run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.eth0.router_solicitations=0", "net.ipv6.conf.eth0.accept_dad=0")
			mcasttest.Run(t, "ip", "-n", ns, "link", "set", "eth0", "addrgenmode", "none")
			mcasttest.Run(t, "ip", "-n", ns, "addr", "add", fmt.Sprintf("fd39:9::%d/64", i+1), "dev", "eth0", "nodad")
		}
		mcasttest.Run(t, "ip", "-n", ns, "link", "set", "eth0", "up")
		if !v6 {
			mcasttest.Run(t, "ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", "eth0")
		}
	}
	// Towards the third receiver, the bridge drops every datagram whose
	// number's low four bits are 7 (nftables' bridge forward hook, on the
	// iperf 2 header's id, the payload's fourth byte): 94 of 1..1500, and
	// never the FIN (-1500 ends in 0x4), whose loss would leave the tail
	// uncounted.
	rules := filepath.Join(t.TempDir(), "drop.nft")
	if err := os.WriteFile(rules, []byte(dropRules), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("needs nftables' nft for the lossy port")
	}
	mcasttest.Run(t, "ip", "netns", "exec", br, "nft", "-f", rules)
	// On each receiver's interface, a counter of the test's datagrams as
	// they arrive (the netdev family's ingress hook, before IP).
	ingress := filepath.Join(t.TempDir(), "count.nft")
	if err := os.WriteFile(ingress, []byte(countRules), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ns := range hosts[1:] {
		mcasttest.Run(t, "ip", "netns", "exec", ns, "nft", "-f", ingress)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	group, others := Group{Addr: netip.MustParseAddrPort("239.39.9.1:5009")}, int64(16)
	if v6 {
		group, others = Group{Addr: netip.MustParseAddrPort("[ff3e::3909]:5009"), Interface: "eth0"}, 64
	}
	var wg sync.WaitGroup
	recv := make([]*receiverRun, 3)
	for i := range recv {
		recv[i] = startReceiver(t, ctx, hosts[i+1], group, true, &wg)
	}
	type counters struct {
		link         mcasttest.LinkStats
		rcvbufErrors int64
	}
	read := func(ns string) counters {
		return counters{link: mcasttest.ReadLinkStats(t, ns, "eth0"), rcvbufErrors: mcasttest.SNMP(t, ns, "Udp", "RcvbufErrors")}
	}
	before := make([]counters, 4)
	for i, ns := range hosts {
		before[i] = read(ns)
	}
	var c *SendConn
	mcasttest.InNetns(t, hosts[0], func() (err error) { c, err = Dial(group, SendOptions{TTL: 1}); return err })
	defer c.Close()
	const n, length = 1500, 1000 // 1.5 MB in 2 s at 6 Mbit/s
	tot, err := Send(ctx, c, SendConfig{Length: length, Rate: 6e6, Bytes: n * length, Port: 5009}, nil)
	if err != nil || tot.Datagrams != n {
		t.Fatalf("sent %d datagrams (%v), want %d", tot.Datagrams, err, n)
	}
	for _, r := range recv {
		wgWaitOne(t, ctx, r)
	}
	cancel()
	wg.Wait()
	// The sender sends nothing else in IPv4 (it joins no group); in IPv6
	// its own MLD and ND may go out beside the datagrams.
	senderOthers := int64(0)
	if v6 {
		senderOthers = others
	}
	if tx := mcasttest.ReadLinkStats(t, hosts[0], "eth0").TxPackets - before[0].link.TxPackets; tx < n || tx-n > senderOthers {
		t.Errorf("the sender's interface sent %d packets, want the %d datagrams and at most %d others", tx, n, senderOthers)
	}
	for i, r := range recv {
		ns := hosts[i+1]
		after := read(ns)
		e := ended(t, r)
		if len(e) != 1 || !e[0].ByFIN {
			t.Fatalf("receiver %d: %d flows (by FIN: %v), want 1 ended by its FIN", i+1, len(e), len(e) == 1 && e[0].ByFIN)
		}
		u := e[0].UDP
		rx := after.link.RxPackets - before[i+1].link.RxPackets
		m := nftDropped.FindStringSubmatch(mcasttest.Run(t, "ip", "netns", "exec", ns, "nft", "list", "table", "netdev", "mc39"))
		if m == nil {
			t.Fatal("nft showed no ingress count")
		}
		arrived, _ := strconv.ParseInt(m[1], 10, 64)
		t.Logf("receiver %d: received %d lost %d of %d; its interface took %d packets, %d of them the test's", i+1, u.Received, u.Lost, u.Expected, rx, arrived)
		if after.rcvbufErrors != before[i+1].rcvbufErrors {
			t.Errorf("receiver %d: its socket buffer overflowed (RcvbufErrors), a loss the interface counters don't show", i+1)
		}
		if arrived != u.Received || rx < arrived || rx-arrived > others {
			t.Errorf("receiver %d: counted %d received; its interface took %d of the test's datagrams, and %d packets in all (want the first two equal, and at most %d others: IGMP, MLD, ND)", i+1, u.Received, arrived, rx, others)
		}
		if u.Expected != n || u.Lost != n-u.Received {
			t.Errorf("receiver %d: %d lost of %d expected, want %d sent less %d received", i+1, u.Lost, u.Expected, n, u.Received)
		}
		if i < 2 && u.Lost != 0 {
			t.Errorf("receiver %d lost %d datagrams on an unimpeded port", i+1, u.Lost)
		}
	}
	m := nftDropped.FindStringSubmatch(mcasttest.Run(t, "ip", "netns", "exec", br, "nft", "list", "table", "bridge", "mc39"))
	if m == nil {
		t.Fatal("nft showed no drop count")
	}
	dropped, _ := strconv.ParseInt(m[1], 10, 64)
	if e := ended(t, recv[2]); len(e) == 1 && (dropped != 94 || e[0].UDP.Lost != dropped) {
		t.Errorf("receiver 3 lost %d datagrams; the bridge dropped %d towards it (want 94 both)", e[0].UDP.Lost, dropped)
	}
}
