//go:build linux

package lab

import (
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/race"
)

// mptcpPathRate is each of the two paths' rate, bit/s.
const mptcpPathRate = 100e6

// twoPathLab is hosts a and b joined by two veth pairs, each shaped to
// mptcpPathRate on a's egress: the lab's own link (to-b, 10.77.1.0/24)
// and a second pair this test adds (mp2, 10.77.2.0/24, a /24 the lab
// gives no link of its own here). a's path manager opens a second
// subflow from its address on mp2, out of mp2, to b's address that the
// connection began with (`ip mptcp endpoint add ... dev mp2 subflow`);
// both hosts allow two subflows (`ip mptcp limits set`).
// The shape is on the sender's egress, as two directly joined hosts
// leave no forwarder for it: the sender is held back by the qdisc's queue
// (TCP small queues) rather than by drops, which caps each path all the
// same.
func twoPathLab(t *testing.T) (*Lab, netip.Addr) {
	t.Helper()
	if b, err := os.ReadFile("/proc/sys/net/mptcp/enabled"); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Skip("MPTCP is not enabled in this kernel (net.mptcp.enabled)")
	}
	l := New(t, Topology{
		Hosts:   []string{"a", "b"},
		Links:   []Link{{A: "a", B: "b", Shape: &Shape{On: "a", Rate: mptcpPathRate}}},
		Sysctls: BigTCPBuffers(),
	})
	a, b := l.Host("a"), l.Host("b")
	a2, b2 := netip.MustParseAddr("10.77.2.1"), netip.MustParseAddr("10.77.2.2")
	steps := [][]string{
		{"-n", a.NS, "link", "add", "mp2", "type", "veth", "peer", "name", "mp2", "netns", b.NS},
		{"-n", a.NS, "addr", "add", a2.String() + "/24", "dev", "mp2"},
		{"-n", b.NS, "addr", "add", b2.String() + "/24", "dev", "mp2"},
		{"-n", a.NS, "link", "set", "dev", "mp2", "up"},
		{"-n", b.NS, "link", "set", "dev", "mp2", "up"},
		{"-n", a.NS, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2"},
		{"-n", b.NS, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2"},
		{"-n", a.NS, "mptcp", "endpoint", "add", a2.String(), "dev", "mp2", "subflow"},
	}
	for _, args := range steps {
		if err := ip(args...); err != nil {
			t.Fatalf("ip %s: %v", strings.Join(args, " "), err)
		}
	}
	if err := applyShape(a.NS, "mp2", Shape{On: "a", Rate: mptcpPathRate}.withDefaults(1500)); err != nil {
		t.Fatal(err)
	}
	return l, a2
}

// Acceptance (issue 39): -m over two 100 Mbit/s paths moves more than
// one path can (over 150 Mbit/s), on two subflows, one a path; each
// subflow's bytes as the kernel counted them are what its veth carried
// (the interface's bytes less the headers), and the subflows' bytes add
// up to the stream's.
func TestAcceptMPTCPTwoPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4-second throughput test; skipped with -short")
	}
	if race.Enabled {
		t.Skip("a rate over two shaped paths means nothing under the race detector")
	}
	l, a2 := twoPathLab(t)
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)

	devs := map[netip.Addr]string{a.Addr: a.Iface("b"), a2: "mp2"}
	before := map[netip.Addr]LinkStats{}
	for addr, dev := range devs {
		st, err := l.LinkStats("a", dev)
		if err != nil {
			t.Fatal(err)
		}
		before[addr] = st
	}
	sp := spec.Default()
	sp.Duration, sp.Interval, sp.MPTCP = 4*time.Second, time.Second, true // at most 2 x 100 Mbit/s x 4 s: 100 MB
	res := wpRun(t, a, b, port, sp, nil)
	after := map[netip.Addr]LinkStats{}
	for addr, dev := range devs {
		st, err := l.LinkStats("a", dev)
		if err != nil {
			t.Fatal(err)
		}
		after[addr] = st
	}
	load, _ := os.ReadFile("/proc/loadavg")

	f := wpFlow(t, res)
	goodput := float64(f.Received.Bytes) * 8 / f.Received.Seconds()
	t.Logf("-m over two %.0f Mbit/s paths: %.1f Mbit/s received (load average %s)", mptcpPathRate/1e6, goodput/1e6, strings.Join(strings.Fields(string(load))[:3], " "))
	m := f.Sent.MPTCP
	if m == nil || m.Fallback || m.SubflowCount != 2 || len(m.Subflows) != 2 {
		t.Fatalf("sender's MPTCP: %+v; want two subflows", m)
	}
	var sum uint64
	var subflowRetrans int64
	onDev, ackedOn := map[netip.Addr]uint64{}, map[netip.Addr]uint64{}
	for i, sf := range m.Subflows {
		local, err := netip.ParseAddrPort(sf.Local)
		if err != nil {
			t.Fatalf("subflow %d: local address %q: %v", i+1, sf.Local, err)
		}
		dev, ok := devs[local.Addr()]
		if !ok {
			t.Fatalf("subflow %d from %s, an address of neither path", i+1, sf.Local)
		}
		t.Logf("subflow %d %s -> %s on %s: %d bytes sent (%d retransmitted), %d acknowledged, RTT %d us",
			i+1, sf.Local, sf.Remote, dev, sf.Info.BytesSent, sf.Info.BytesRetrans, sf.Info.BytesAcked, sf.Info.RTTus)
		onDev[local.Addr()] += sf.Info.BytesSent
		ackedOn[local.Addr()] += sf.Info.BytesAcked
		sum += sf.Info.BytesAcked
		subflowRetrans += int64(sf.Info.TotalRetrans)
	}
	for addr, dev := range devs {
		sent, acked := onDev[addr], ackedOn[addr]
		wire := after[addr].TxBytes - before[addr].TxBytes
		packets := after[addr].TxPackets - before[addr].TxPackets
		t.Logf("%s: the subflows from %s sent %d bytes, %d acknowledged; the interface carried %d in %d frames", dev, addr, sent, acked, wire, packets)
		// What the peer acknowledged crossed the interface; what was
		// sent did, but for what the qdisc dropped (the shape is on this
		// egress) and had sent again. The veth counts each frame whole,
		// GSO's too: a data packet's headers (Ethernet 14, IPv4 20, TCP
		// 20 with up to 40 of options, MPTCP's DSS among them) on top of
		// the payload, and the test's other packets (the control
		// connection shares the first path).
		if acked > wire || float64(wire) > 1.08*float64(sent)+float64(packets)*100+64<<10 {
			t.Errorf("%s: the kernel counted %d bytes sent and %d acknowledged on its subflows, the interface carried %d in %d frames", dev, sent, acked, wire, packets)
		}
		if float64(sent) < 0.2*float64(f.Sent.Bytes) {
			t.Errorf("%s carried %d of the stream's %d bytes: not a split over two paths", dev, sent, f.Sent.Bytes)
		}
	}
	// The stream's retransmits are its subflows', read a moment before
	// them, and its rows add up to them.
	if f.Sent.Retransmits > subflowRetrans || f.Sent.Retransmits < subflowRetrans-5 {
		t.Errorf("the stream counted %d retransmits, its subflows %d", f.Sent.Retransmits, subflowRetrans)
	}
	var rows int64
	for _, iv := range res.Local.Intervals {
		for _, si := range iv.Streams {
			if si.Sender && !iv.Omitted {
				rows += si.Retransmits
			}
		}
	}
	if rows != f.Sent.Retransmits {
		t.Errorf("the rows counted %d retransmits, the total %d", rows, f.Sent.Retransmits)
	}
	// Each byte the stream wrote was acknowledged on one subflow at
	// least (the drain waited for every subflow), so the subflows' shares
	// add up to the stream, with its hello; a byte MPTCP sent again on
	// the other subflow can be acknowledged on both, which the bound
	// allows. (Their bytes sent less retransmissions do not add up: data
	// MPTCP sends again on another subflow is new data there.)
	if sum < uint64(f.Sent.Bytes) || float64(sum) > 1.05*float64(f.Sent.Bytes)+1<<20 {
		t.Errorf("the subflows' peers acknowledged %d bytes, the stream wrote %d", sum, f.Sent.Bytes)
	}
	if goodput <= 1.5*mptcpPathRate {
		t.Errorf("%.1f Mbit/s over two %.0f Mbit/s paths: not above one path's rate by half (load average %s)", goodput/1e6, mptcpPathRate/1e6, load)
	}
}
