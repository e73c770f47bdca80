package lab

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// superPacket builds what the kernel hands over for a TCP/IPv4 GSO
// super-packet: virtio-net header, IPv4 header, TCP header with the
// timestamp option and the pseudo-header sum, payload.
func superPacket(payload []byte, mss int, flags byte) []byte {
	const iphl, tcphl = 20, 32
	b := make([]byte, vnetHdrLen+iphl+tcphl+len(payload))
	vh := vnetHdr{flags: vnetNeedsCsum, gsoType: vnetGSOTCPv4, hdrLen: iphl + tcphl, gsoSize: uint16(mss), csumStart: iphl, csumOffset: 16}
	vh.encode(b)
	ip := b[vnetHdrLen:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	binary.BigEndian.PutUint16(ip[4:], 0xfffe) // the ID wraps within the packet
	ip[6] = 0x40                               // DF
	ip[8], ip[9] = 64, unix.IPPROTO_TCP
	copy(ip[12:], []byte{10, 77, 1, 1, 10, 77, 2, 2})
	binary.BigEndian.PutUint16(ip[10:], ^checksum(ip[:iphl], 0))
	tcp := ip[iphl:]
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 5201)
	binary.BigEndian.PutUint32(tcp[4:], 0xffffff00) // the sequence number wraps too
	binary.BigEndian.PutUint32(tcp[8:], 77)
	tcp[12] = (tcphl / 4) << 4
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:], 1000)
	copy(tcp[20:], []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2})
	copy(tcp[tcphl:], payload)
	var ph [12]byte
	copy(ph[:8], ip[12:20])
	ph[9] = unix.IPPROTO_TCP
	binary.BigEndian.PutUint16(ph[10:], uint16(tcphl+len(payload)))
	binary.BigEndian.PutUint16(tcp[16:], checksum(ph[:], 0))
	return b
}

// finishChecksum does what checksum offload does with NEEDS_CSUM: sum from
// csum_start to the end (the field holds the pseudo-header sum) and store
// the complement.
func finishChecksum(pkt []byte, start, off int) {
	binary.BigEndian.PutUint16(pkt[start+off:], ^checksum(pkt[start:], 0))
}

func TestSegmentHeaders(t *testing.T) {
	payload := make([]byte, 3500)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	const mss = 1448
	raw := superPacket(payload, mss, 0x80|0x10|0x08|0x01) // CWR ACK PSH FIN
	sp := &superPkt{buf: &pbuf{b: raw}, n: len(raw)}
	sp.parse()
	if !sp.gso || sp.nseg != 3 || sp.hl != 52 || sp.iphl != 20 || sp.plen != 3500 {
		t.Fatalf("parse: %+v", sp)
	}
	if got := []int{sp.segSize(0), sp.segSize(1), sp.segSize(2)}; got[0] != 1500 || got[1] != 1500 || got[2] != 52+604 {
		t.Fatalf("segment sizes %v", got)
	}
	for _, r := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {0, 1}, {1, 2}} {
		first, last := r[0], r[1]
		vh, pkt, pl := segmentOf(sp, first, last)
		off, end := first*mss, min(3500, (last+1)*mss)
		if !bytes.Equal(pl, payload[off:end]) {
			t.Fatalf("%v: wrong payload slice", r)
		}
		if int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) {
			t.Errorf("%v: IP total length %d, packet %d", r, binary.BigEndian.Uint16(pkt[2:]), len(pkt))
		}
		if id := binary.BigEndian.Uint16(pkt[4:]); id != uint16(0xfffe+first) {
			t.Errorf("%v: IP ID %#x", r, id)
		}
		if checksum(pkt[:20], 0) != 0xffff {
			t.Errorf("%v: bad IP header checksum", r)
		}
		if seq := binary.BigEndian.Uint32(pkt[24:]); seq != uint32(0xffffff00+off) {
			t.Errorf("%v: seq %#x", r, seq)
		}
		fl := pkt[33]
		if (fl&0x80 != 0) != (first == 0) || (fl&0x09 == 0x09) != (last == 2) || fl&0x10 == 0 {
			t.Errorf("%v: flags %#x", r, fl)
		}
		wantGSO := uint8(vnetGSONone)
		if last > first {
			wantGSO = vnetGSOTCPv4
		}
		if vh.gsoType != wantGSO || vh.flags != vnetNeedsCsum || vh.csumStart != 20 || vh.csumOffset != 16 ||
			(last > first && vh.gsoSize != mss) {
			t.Errorf("%v: virtio header %+v", r, vh)
		}
		// Completing the checksum as the kernel would gives a valid TCP
		// checksum: the ones'-complement sum over pseudo-header and
		// segment is all ones.
		if !l4ChecksumOK(pkt, unix.IPPROTO_TCP, 16) {
			t.Errorf("%v: TCP checksum does not verify", r)
		}
	}
	// A plain packet (no GSO) is one segment of its full size.
	plain := superPacket(payload[:100], mss, 0x10)
	plain[1] = vnetGSONone
	p2 := &superPkt{buf: &pbuf{b: plain}, n: len(plain)}
	p2.parse()
	if p2.gso || p2.nseg != 1 || p2.segSize(0) != 152 {
		t.Fatalf("plain packet parsed as %+v", p2)
	}
}

// udpSuperPacket builds what the kernel hands over for a UDP/IPv4 GSO
// super-packet (USO): virtio-net header, IPv4 header, UDP header with the
// length of the whole and the pseudo-header sum, payload.
func udpSuperPacket(payload []byte, size int) []byte {
	const iphl = 20
	b := make([]byte, vnetHdrLen+iphl+udpHdrLen+len(payload))
	vh := vnetHdr{flags: vnetNeedsCsum, gsoType: vnetGSOUDPL4, hdrLen: iphl + udpHdrLen, gsoSize: uint16(size), csumStart: iphl, csumOffset: udpChecksumField}
	vh.encode(b)
	ip := b[vnetHdrLen:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	binary.BigEndian.PutUint16(ip[4:], 0x1234)
	ip[8], ip[9] = 64, unix.IPPROTO_UDP
	copy(ip[12:], []byte{10, 77, 1, 1, 10, 77, 2, 2})
	binary.BigEndian.PutUint16(ip[10:], ^checksum(ip[:iphl], 0))
	udp := ip[iphl:]
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 5201)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpHdrLen+len(payload)))
	copy(udp[udpHdrLen:], payload)
	var ph [12]byte
	copy(ph[:8], ip[12:20])
	ph[9] = unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(ph[10:], uint16(udpHdrLen+len(payload)))
	binary.BigEndian.PutUint16(udp[udpChecksumField:], checksum(ph[:], 0))
	return b
}

// A UDP GSO batch is segmented per datagram, each with its own lengths,
// IP ID and a checksum that verifies once offload completes it.
func TestSegmentUDPHeaders(t *testing.T) {
	const size = 1472
	payload := make([]byte, 2*size+300)
	for i := range payload {
		payload[i] = byte(i * 13)
	}
	raw := udpSuperPacket(payload, size)
	sp := &superPkt{buf: &pbuf{b: raw}, n: len(raw)}
	sp.parse()
	if !sp.gso || !sp.udp || sp.nseg != 3 || sp.hl != 28 || sp.plen != len(payload) {
		t.Fatalf("parse: %+v", sp)
	}
	if got := []int{sp.segSize(0), sp.segSize(1), sp.segSize(2)}; got[0] != 1500 || got[1] != 1500 || got[2] != 28+300 {
		t.Fatalf("segment sizes %v", got)
	}
	for _, r := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {0, 1}, {1, 2}} {
		first, last := r[0], r[1]
		vh, pkt, pl := segmentOf(sp, first, last)
		off, end := first*size, min(len(payload), (last+1)*size)
		if !bytes.Equal(pl, payload[off:end]) {
			t.Fatalf("%v: wrong payload slice", r)
		}
		if int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) || int(binary.BigEndian.Uint16(pkt[24:])) != len(pkt)-20 {
			t.Errorf("%v: IP length %d, UDP length %d, packet %d", r, binary.BigEndian.Uint16(pkt[2:]), binary.BigEndian.Uint16(pkt[24:]), len(pkt))
		}
		if id := binary.BigEndian.Uint16(pkt[4:]); id != uint16(0x1234+first) {
			t.Errorf("%v: IP ID %#x", r, id)
		}
		if checksum(pkt[:20], 0) != 0xffff {
			t.Errorf("%v: bad IP header checksum", r)
		}
		wantGSO := uint8(vnetGSONone)
		if last > first {
			wantGSO = vnetGSOUDPL4
		}
		if vh.gsoType != wantGSO || vh.csumStart != 20 || vh.csumOffset != udpChecksumField || vh.hdrLen != 28 ||
			(last > first && vh.gsoSize != size) {
			t.Errorf("%v: virtio header %+v", r, vh)
		}
		if last > first {
			continue // the kernel segments it and fixes each datagram's checksum
		}
		if !l4ChecksumOK(pkt, unix.IPPROTO_UDP, udpChecksumField) {
			t.Errorf("%v: UDP checksum does not verify", r)
		}
	}
}

// segmentOf builds segments first..last of sp and returns its virtio-net
// header, the whole packet (headers and payload) and the payload slice.
func segmentOf(sp *superPkt, first, last int) (vh vnetHdr, pkt, payload []byte) {
	var scratch [vnetHdrLen + 120]byte
	h, pl := sp.segment(scratch[:], first, last)
	vh.decode(h)
	return vh, append(append([]byte(nil), h[vnetHdrLen:]...), pl...), pl
}

// l4ChecksumOK completes the TCP or UDP checksum of an IPv4 packet (20-byte
// header) as checksum offload would, and checks that the ones'-complement
// sum over pseudo-header and segment is all ones.
func l4ChecksumOK(pkt []byte, proto byte, field int) bool {
	finishChecksum(pkt, 20, field)
	var ph [12]byte
	copy(ph[:8], pkt[12:20])
	ph[9] = proto
	binary.BigEndian.PutUint16(ph[10:], uint16(len(pkt)-20))
	return checksum(pkt[20:], uint32(checksum(ph[:], 0))) == 0xffff
}
