package trace

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// quotedUDP is the start of a UDP probe as an ICMP error quotes it: an
// IPv4 header and the UDP header.
func quotedUDP(dst netip.Addr, src, dport uint16) []byte {
	b := make([]byte, 28)
	b[0] = 0x45
	b[8] = 1 // the TTL that ran out
	b[9] = 17
	copy(b[12:16], []byte{192, 0, 2, 1})
	d := dst.As4()
	copy(b[16:20], d[:])
	binary.BigEndian.PutUint16(b[20:], src)
	binary.BigEndian.PutUint16(b[22:], dport)
	binary.BigEndian.PutUint16(b[24:], 40)
	return b
}

func quotedEcho(dst netip.Addr, id, seq uint16) []byte {
	b := make([]byte, 28)
	b[0] = 0x45
	b[9] = 1
	d := dst.As4()
	copy(b[16:20], d[:])
	b[20] = byte(ipv4.ICMPTypeEcho)
	binary.BigEndian.PutUint16(b[24:], id)
	binary.BigEndian.PutUint16(b[26:], seq)
	return b
}

// quoted6 is the start of a probe as an ICMPv6 error quotes it: an IPv6
// header and 8 bytes of what it carries (next header nh).
func quoted6(dst netip.Addr, nh byte, l4 [8]byte) []byte {
	b := make([]byte, 48)
	b[0] = 0x60
	b[6] = nh
	b[7] = 1
	d := dst.As16()
	copy(b[24:40], d[:])
	copy(b[40:], l4[:])
	return b
}

func marshal(t testing.TB, m icmp.Message) []byte {
	t.Helper()
	b, err := m.Marshal(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseReply(t *testing.T) {
	dst := netip.MustParseAddr("198.51.100.7")
	udpProbe := Probe{Proto: UDP, Dst: dst, SrcPort: 40001, DstPort: BasePort + 4, UDPLen: 40}
	echoProbe := Probe{Proto: ICMP, Dst: dst, ID: 0x1234, Seq: 9}
	cases := []struct {
		name  string
		msg   icmp.Message
		kind  ReplyKind
		match Probe
		other Probe // one it must not match
	}{
		{"time exceeded for UDP", icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: quotedUDP(dst, 40001, BasePort+4)}},
			TimeExceeded, udpProbe, Probe{Proto: UDP, Dst: dst, SrcPort: 40001, DstPort: BasePort + 4, UDPLen: 41}},
		{"port unreachable for UDP", icmp.Message{Type: ipv4.ICMPTypeDestinationUnreachable, Code: 3, Body: &icmp.DstUnreach{Data: quotedUDP(dst, 40001, BasePort+4)}},
			Unreachable, udpProbe, Probe{Proto: UDP, Dst: netip.MustParseAddr("198.51.100.8"), SrcPort: 40001, DstPort: BasePort + 4, UDPLen: 40}},
		{"time exceeded for echo", icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: quotedEcho(dst, 0x1234, 9)}},
			TimeExceeded, echoProbe, Probe{Proto: ICMP, Dst: dst, ID: 0x1235, Seq: 9}},
		{"echo reply", icmp.Message{Type: ipv4.ICMPTypeEchoReply, Body: &icmp.Echo{ID: 0x1234, Seq: 9, Data: []byte("probe")}},
			EchoReply, echoProbe, Probe{Proto: ICMP, Dst: dst, ID: 0x1234, Seq: 10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseReply(marshal(t, c.msg))
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != c.kind || r.Code != c.msg.Code {
				t.Fatalf("kind %d code %d, want %d %d", r.Kind, r.Code, c.kind, c.msg.Code)
			}
			if !r.Matches(c.match) {
				t.Fatalf("%+v does not match %+v", r, c.match)
			}
			if r.Matches(c.other) {
				t.Fatalf("%+v matches %+v", r, c.other)
			}
		})
	}
}

func TestParseReply6(t *testing.T) {
	dst := netip.MustParseAddr("2001:db8::7")
	var udp, echo [8]byte
	binary.BigEndian.PutUint16(udp[0:], 40001)
	binary.BigEndian.PutUint16(udp[2:], BasePort)
	binary.BigEndian.PutUint16(udp[4:], 40)
	echo[0] = byte(ipv6.ICMPTypeEchoRequest)
	binary.BigEndian.PutUint16(echo[4:], 0x1234)
	binary.BigEndian.PutUint16(echo[6:], 9)
	udpProbe := Probe{Proto: UDP, Dst: dst, SrcPort: 40001, DstPort: BasePort, UDPLen: 40}
	echoProbe := Probe{Proto: ICMP, Dst: dst, ID: 0x1234, Seq: 9}
	cases := []struct {
		name  string
		msg   icmp.Message
		kind  ReplyKind
		match Probe
	}{
		{"time exceeded for UDP", icmp.Message{Type: ipv6.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: quoted6(dst, 17, udp)}}, TimeExceeded, udpProbe},
		{"port unreachable for UDP", icmp.Message{Type: ipv6.ICMPTypeDestinationUnreachable, Code: 4, Body: &icmp.DstUnreach{Data: quoted6(dst, 17, udp)}}, Unreachable, udpProbe},
		{"time exceeded for echo", icmp.Message{Type: ipv6.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: quoted6(dst, 58, echo)}}, TimeExceeded, echoProbe},
		{"echo reply", icmp.Message{Type: ipv6.ICMPTypeEchoReply, Body: &icmp.Echo{ID: 0x1234, Seq: 9}}, EchoReply, echoProbe},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseReply6(marshal(t, c.msg))
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != c.kind || r.Code != c.msg.Code || !r.Matches(c.match) {
				t.Fatalf("%+v: want kind %d code %d matching %+v", r, c.kind, c.msg.Code, c.match)
			}
			other := c.match
			other.Seq++
			other.UDPLen++
			if r.Matches(other) {
				t.Fatalf("%+v matches %+v", r, other)
			}
		})
	}
	// An extension header, a short quote, an IPv4 quote and a quoted echo
	// reply are about no probe.
	short := quoted6(dst, 17, udp)[:47]
	v4 := quoted6(dst, 17, udp)
	v4[0] = 0x45
	reply := echo
	reply[0] = byte(ipv6.ICMPTypeEchoReply)
	for name, q := range map[string][]byte{"hop-by-hop": quoted6(dst, 0, udp), "short": short, "IPv4": v4, "echo reply": quoted6(dst, 58, reply)} {
		b := marshal(t, icmp.Message{Type: ipv6.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: q}})
		if _, err := ParseReply6(b); !errors.Is(err, ErrNotProbeReply) {
			t.Errorf("%s: %v, want ErrNotProbeReply", name, err)
		}
	}
}

func TestParseReplyRefuses(t *testing.T) {
	dst := netip.MustParseAddr("198.51.100.7")
	short := quotedUDP(dst, 1, 2)[:27]
	v6 := quotedUDP(dst, 1, 2)
	v6[0] = 0x65
	longIHL := quotedUDP(dst, 1, 2)
	longIHL[0] = 0x4f // 60 bytes of header in a 28-byte quote
	tcp := quotedUDP(dst, 1, 2)
	tcp[9] = 6
	echoReq := quotedEcho(dst, 1, 2)
	echoReq[20] = byte(ipv4.ICMPTypeEchoReply)
	for name, b := range map[string][]byte{
		"echo request": marshal(t, icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: 1, Seq: 1}}),
		"short quote":  marshal(t, icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: short}}),
		"IPv6 quote":   marshal(t, icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: v6}}),
		"long header":  marshal(t, icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: longIHL}}),
		"TCP quote":    marshal(t, icmp.Message{Type: ipv4.ICMPTypeDestinationUnreachable, Body: &icmp.DstUnreach{Data: tcp}}),
		"reply quote":  marshal(t, icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: echoReq}}),
	} {
		if _, err := ParseReply(b); !errors.Is(err, ErrNotProbeReply) {
			t.Errorf("%s: %v, want ErrNotProbeReply", name, err)
		}
	}
	for _, b := range [][]byte{nil, {11}, {11, 0, 0}} {
		if _, err := ParseReply(b); err == nil {
			t.Errorf("%x: read as a reply", b)
		}
	}
}

// FuzzParseReply: any bytes read from the network give a reply or an
// error, never a panic, and a reply about a quoted datagram names its
// destination.
func FuzzParseReply(f *testing.F) {
	dst := netip.MustParseAddr("198.51.100.7")
	f.Add(marshal(f, icmp.Message{Type: ipv4.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: quotedUDP(dst, 40001, BasePort)}}))
	f.Add(marshal(f, icmp.Message{Type: ipv4.ICMPTypeDestinationUnreachable, Code: 3, Body: &icmp.DstUnreach{Data: quotedEcho(dst, 7, 8)}}))
	f.Add(marshal(f, icmp.Message{Type: ipv4.ICMPTypeEchoReply, Body: &icmp.Echo{ID: 7, Seq: 8}}))
	f.Add([]byte{11, 0, 0, 0, 0, 0, 0, 0, 0x4f})
	var udp [8]byte
	f.Add(marshal(f, icmp.Message{Type: ipv6.ICMPTypeTimeExceeded, Body: &icmp.TimeExceeded{Data: quoted6(netip.MustParseAddr("2001:db8::7"), 17, udp)}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, parse := range []struct {
			name  string
			fn    func([]byte) (Reply, error)
			valid func(netip.Addr) bool
		}{{"v4", ParseReply, netip.Addr.Is4}, {"v6", ParseReply6, netip.Addr.Is6}} {
			r, err := parse.fn(b)
			if err != nil {
				continue
			}
			switch r.Kind {
			case EchoReply:
				if r.Proto != ICMP {
					t.Fatalf("%s: an echo reply about %q", parse.name, r.Proto)
				}
			case TimeExceeded, Unreachable:
				if !parse.valid(r.Dst) || (r.Proto != UDP && r.Proto != ICMP) {
					t.Fatalf("%s: an error reply %+v without its quoted destination or protocol", parse.name, r)
				}
			default:
				t.Fatalf("%s: kind %d", parse.name, r.Kind)
			}
		}
	})
}
