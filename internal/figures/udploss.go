package figures

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// UDPLoss attributes a direction's lost datagrams to where they were
// dropped: the receiving host, the sending host, or the network between.
// AttributeUDPLoss fills it.
//
// Lost is the receiver's Lost count as the UDP engine reports it: every
// datagram that had not arrived within the late threshold. Datagrams that
// arrived later still (result.UDP.Late) are part of it; no host dropped
// them, so they land in Network: what neither host's counters explain.
//
// The host counters are /proc/net/snmp deltas and so host-wide: they also
// count drops of other sockets on the same host. Each host figure is
// therefore capped at what is left of Lost, and Approximate says when the
// split may include other traffic.
type UDPLoss struct {
	Lost             int64  // datagrams the receiver counted lost (late ones included)
	ReceiverRcvbuf   uint64 // receiving host's RcvbufErrors delta
	ReceiverInErrors uint64 // InErrors delta (includes RcvbufErrors on Linux)
	SenderSndbuf     uint64 // sending host's SndbufErrors delta
	SendErrors       int64  // sender's failed sends (ENOBUFS...), sent again, so not lost
	// Network is the rest: lost − what the hosts' counters explain (≥ 0),
	// lost between the two hosts' UDP layers as far as any counter tells.
	// No counter sees the path itself (on loopback there is none), so the
	// verdict calls it unexplained. Where a host's counters are missing it
	// also holds whatever that host dropped, and Verdict says so.
	Network int64
	// Approximate is set when the attribution may count other traffic's
	// drops: other tests ran at the same time, or the hosts counted more
	// drops than this direction lost.
	Approximate bool
	Verdict     string // one line

	// Places that count their own drops, when known (AttributeUDPLossAt):
	// ReceiverSocket is the receiving socket's own drops (sk_drops), per
	// datagram unless SocketBatches (the socket took GRO batches, and
	// Linux counts a dropped batch once); Router is a lab router's drops
	// in this direction, every packet it dropped (a test's control
	// packets too). Each is printed as counted. Network is then what
	// neither explains, printed as unexplained, never put down to a place.
	ReceiverSocket *int64 `json:",omitempty"`
	SocketBatches  bool   `json:",omitempty"`
	Router         *int64 `json:",omitempty"`
}

// LossCounts are the per-place drop counts AttributeUDPLossAt takes
// beside the hosts' UDP counters: nil where a place was not counted.
type LossCounts struct {
	// ReceiverSocket is the receiving socket's own drop count
	// (result.UDP.SocketDrops), and SocketBatches says it counts GRO
	// batches, not datagrams (result.UDP.SocketDropsGRO).
	ReceiverSocket *uint64
	SocketBatches  bool
	// Router is the lab router's drops in the test's direction, over the
	// test (lab.RouterWatch).
	Router *uint64
}

// AttributeUDPLossAt attributes lost datagrams to the places that count
// their own drops: the lab's router and the receiving socket, each exact
// and per place, and the sending host. Where the receiving socket's count
// is missing, it falls back to AttributeUDPLoss's host-wide RcvbufErrors.
// What the counts do not explain is unexplained (Network): no count is
// capped, scaled or moved to make the rest fit.
func AttributeUDPLossAt(lost, sendErrors int64, receiverHost, senderHost *result.SNMP, concurrentTests, gsoSegments int, c LossCounts) UDPLoss {
	if c.ReceiverSocket == nil && c.Router == nil {
		return AttributeUDPLoss(lost, sendErrors, receiverHost, senderHost, concurrentTests, gsoSegments)
	}
	var a UDPLoss
	if c.ReceiverSocket != nil {
		a = UDPLoss{Lost: max(lost, 0), SendErrors: max(sendErrors, 0)}
		if receiverHost != nil {
			a.ReceiverRcvbuf, a.ReceiverInErrors = receiverHost.RcvbufErrors, receiverHost.InErrors
		}
		if senderHost != nil {
			a.SenderSndbuf = senderHost.SndbufErrors
		}
		n := int64(*c.ReceiverSocket)
		a.ReceiverSocket, a.SocketBatches = &n, c.SocketBatches
	} else {
		// The host-wide split, then the router's count taken out of what
		// it left unexplained.
		a = AttributeUDPLoss(lost, sendErrors, receiverHost, senderHost, concurrentTests, gsoSegments)
	}
	if c.Router != nil {
		n := int64(*c.Router)
		a.Router = &n
	}
	var sendDrops int64
	if a.SenderSndbuf > uint64(a.SendErrors) {
		sendDrops = int64(a.SenderSndbuf - uint64(a.SendErrors))
	}
	counted := ptrOr(a.Router) + ptrOr(a.ReceiverSocket)
	if a.ReceiverSocket != nil {
		counted += sendDrops
	} else {
		counted += a.Lost - a.Network // the host counters' share, as AttributeUDPLoss put it
	}
	a.Network = a.Lost - counted
	a.Approximate = a.ReceiverSocket == nil || a.SocketBatches || (sendDrops > 0 && concurrentTests > 0)
	a.Verdict = a.placesVerdict(sendDrops, gsoSegments)
	return a
}

func ptrOr(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// placesVerdict says each place's count as counted, then the remainder:
// unexplained when positive, and when the counts add to more than was
// lost, by how much and why that can be.
func (a UDPLoss) placesVerdict(sendDrops int64, gsoSegments int) string {
	if a.Lost == 0 && ptrOr(a.Router)+ptrOr(a.ReceiverSocket) == 0 {
		return "no datagrams were lost"
	}
	var parts []string
	if a.Router != nil {
		parts = append(parts, "the lab's router dropped "+units.Thousands(*a.Router))
	}
	switch {
	case a.ReceiverSocket != nil && a.SocketBatches && *a.ReceiverSocket > 0:
		s := "the receiving socket dropped " + units.Thousands(*a.ReceiverSocket) + " (counted per GRO batch"
		if gsoSegments > 1 {
			s += fmt.Sprintf(": %s to %s datagrams, as Linux counts a batch once)",
				units.Thousands(*a.ReceiverSocket), units.Thousands(*a.ReceiverSocket*int64(gsoSegments)))
		} else {
			s += ", as Linux counts a batch once)"
		}
		parts = append(parts, s)
	case a.ReceiverSocket != nil:
		parts = append(parts, "the receiving socket dropped "+units.Thousands(*a.ReceiverSocket))
	default:
		if n := a.Lost - a.Network - ptrOr(a.Router); n > 0 {
			parts = append(parts, "the receiving host's counters (host-wide RcvbufErrors) explain "+units.Thousands(n))
		}
	}
	if a.ReceiverSocket != nil && sendDrops > 0 {
		parts = append(parts, "the sending host dropped "+units.Thousands(sendDrops)+" "+senderCause)
	}
	v := "of " + units.Thousands(a.Lost) + " lost datagrams, " + joinAnd(parts)
	switch {
	case a.Network > 0 && a.SocketBatches:
		v += "; " + units.Thousands(a.Network) + " are not counted one by one (the socket's dropped batches may hold them)"
	case a.Network > 0:
		v += "; " + units.Thousands(a.Network) + " are unexplained: no counter saw them dropped"
	case a.Network < 0:
		v += fmt.Sprintf("; the counts add to %s more than were lost: the router counts every packet it dropped in the direction, the test's control packets too",
			units.Thousands(-a.Network))
	default:
		v += ": every lost datagram is counted where it was dropped"
	}
	return v
}

// AttributeUDPLoss splits lost datagrams between the receiving host's
// socket buffer (RcvbufErrors), its other receive errors (InErrors beyond
// RcvbufErrors: bad checksums, memory), the sending host and the network,
// in that order, each capped at what is left.
//
// The sending host's share is its SndbufErrors less the sender's own
// failed sends. Linux counts two things in SndbufErrors: sends it refused
// (ENOBUFS, EAGAIN), which the sender sees, counts in sendErrors and
// sends again under the same sequence number, so the receiver never
// misses them; and datagrams it accepted and then dropped because the
// qdisc or NIC queue was full, which the sender cannot see and the
// receiver counts lost. Only the second kind explains loss.
//
// receiverHost and senderHost may be nil where a host has no such
// counters (not Linux); the verdict then says what cannot be told apart.
// concurrentTests is how many other tests ran at the same time.
//
// gsoSegments is the most datagrams the sender put in one GSO send: a
// receiving host that drops such a batch counts one RcvbufError for all of
// them, so each counted drop stands for up to that many datagrams.
func AttributeUDPLoss(lost int64, sendErrors int64, receiverHost, senderHost *result.SNMP, concurrentTests int, gsoSegments int) UDPLoss {
	a := UDPLoss{Lost: max(lost, 0), SendErrors: max(sendErrors, 0)}
	per := uint64(max(1, gsoSegments))
	if receiverHost != nil {
		a.ReceiverRcvbuf, a.ReceiverInErrors = receiverHost.RcvbufErrors, receiverHost.InErrors
	}
	if senderHost != nil {
		a.SenderSndbuf = senderHost.SndbufErrors
	}

	// What each host dropped, host-wide. Linux counts every RcvbufError in
	// InErrors too; other systems might not, hence the max.
	recvDrops := max(a.ReceiverInErrors, a.ReceiverRcvbuf)
	var sendDrops uint64
	if a.SenderSndbuf > uint64(a.SendErrors) {
		sendDrops = a.SenderSndbuf - uint64(a.SendErrors)
	}

	left := uint64(a.Lost)
	take := func(n uint64) int64 {
		n = min(n, left)
		left -= n
		return int64(n)
	}
	drops := drops{
		rcvbuf:    take(a.ReceiverRcvbuf * per),
		otherRecv: take((recvDrops - a.ReceiverRcvbuf) * per),
		sender:    take(sendDrops),
	}
	a.Network = int64(left)

	a.Approximate = concurrentTests > 0 || (recvDrops*per)+sendDrops > uint64(a.Lost)
	a.Verdict = a.verdict(drops, receiverHost != nil, senderHost != nil, recvDrops+sendDrops, concurrentTests)
	return a
}

// drops are the lost datagrams put down to each host cause.
type drops struct {
	rcvbuf, otherRecv, sender int64
}

// The causes, and the advice for each.
const (
	rcvbufCause = "dropped by the receiving host's socket buffer (RcvbufErrors)"
	rcvbufHint  = "raise -w or the receiver's net.core.rmem_max"
	otherCause  = "dropped by the receiving host for other reasons (InErrors beyond RcvbufErrors: bad checksums, memory)"
	senderCause = "(SndbufErrors/ENOBUFS)"
	senderHint  = "the sender outran its own socket buffer or NIC queue"
)

func (a UDPLoss) verdict(d drops, receiverKnown, senderKnown bool, hostDrops uint64, concurrentTests int) string {
	if a.Lost == 0 {
		return "no datagrams were lost"
	}
	lead := "of " + units.Thousands(a.Lost) + " lost datagrams, "
	// Hosts without counters may hide drops in what looks like the network's.
	var unknown []string
	if !receiverKnown {
		unknown = append(unknown, "the receiving host")
	}
	if !senderKnown {
		unknown = append(unknown, "the sending host")
	}
	var v string
	switch {
	case !receiverKnown && d.sender == 0:
		v = lead + "where they were dropped is unknown: the receiving host has no UDP counters to tell its drops from any other loss"
	case d.rcvbuf+d.otherRecv+d.sender == 0 && senderKnown:
		v = lead + "none is explained by either host's counters: neither host counted a drop"
	case d.rcvbuf+d.otherRecv+d.sender == 0:
		v = lead + "none is explained by the receiving host's counters, and the sending host has no UDP counters"
	default:
		var parts, hints []string
		if d.rcvbuf > 0 {
			parts = append(parts, units.Thousands(d.rcvbuf)+" were "+rcvbufCause)
			hints = append(hints, rcvbufHint)
		}
		if d.otherRecv > 0 {
			parts = append(parts, units.Thousands(d.otherRecv)+" were "+otherCause)
		}
		if d.sender > 0 {
			parts = append(parts, "the sending host dropped "+units.Thousands(d.sender)+" "+senderCause)
			hints = append(hints, senderHint)
		}
		if a.Network > 0 {
			// No counter sees the path between the hosts, so what the
			// hosts do not explain is only that: unexplained. Put down to
			// "the network" it would be wrong on loopback.
			what := " are not explained by either host's counters"
			if len(unknown) > 0 {
				what = " are not explained by the counters there are (" + strings.Join(unknown, " and ") + " has no UDP counters)"
			}
			parts = append(parts, units.Thousands(a.Network)+what)
		}
		v = lead + joinAnd(parts)
		switch {
		case len(parts) == 1 && len(hints) == 1:
			v += ": " + hints[0]
		case len(hints) > 0:
			v += "; " + strings.Join(hints, "; ")
		}
	}
	switch {
	case concurrentTests > 0:
		v += fmt.Sprintf(" (approximate: the hosts' UDP counters are host-wide and %d other %s at the same time)",
			concurrentTests, pluralVerb(concurrentTests, "test ran", "tests ran"))
	case hostDrops > uint64(a.Lost):
		v += " (approximate: the hosts' UDP counters are host-wide and counted " + units.Thousands(int64(hostDrops)) +
			" drops, more than this test lost, so other traffic was dropped too)"
	}
	return v
}

// joinAnd joins "a", "a and b", "a, b, and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	case 2:
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + ", and " + parts[len(parts)-1]
}

func pluralVerb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
