//go:build linux

package lab

import (
	"encoding/binary"
	"math"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// The TUN devices carry a virtio-net header before each packet
// (IFF_VNET_HDR), which lets the kernel hand over and take back TCP
// super-packets, and on Linux 6.2+ UDP ones (USO, what a UDP sender's GSO
// makes): one read or write moves up to 64 KiB instead of one
// 1500-byte packet. On a 2-core VM, where every system call is expensive,
// that is what lets the router carry 1 Gbit/s and more. The emulator still
// decides per wire packet: a super-packet of n segments enters the
// impair.Direction as n packets of their real sizes, and the writer joins
// the segments that leave together, in order and unharmed, back into one
// super-packet (or writes single segments, with rebuilt headers, where
// loss, duplication or re-ordering split them).

const (
	vnetHdrLen       = 10 // struct virtio_net_hdr
	vnetNeedsCsum    = 1  // VIRTIO_NET_HDR_F_NEEDS_CSUM
	vnetGSONone      = 0
	vnetGSOTCPv4     = 1
	vnetGSOUDPL4     = 5 // VIRTIO_NET_HDR_GSO_UDP_L4
	vnetGSOECN       = 0x80
	tunFCsum         = 0x01 // TUN_F_CSUM
	tunFTSO4         = 0x02 // TUN_F_TSO4
	tunFUSO4         = 0x20 // TUN_F_USO4 (Linux 6.2+)
	tunFUSO6         = 0x40 // TUN_F_USO6, which the kernel takes only with USO4
	udpHdrLen        = 8
	udpChecksumField = 6
	maxRead          = vnetHdrLen + 65535
	tcpFlagFIN       = 0x01
	tcpFlagPSH       = 0x08
	tcpFlagCWR       = 0x80
	tcpChecksumField = 16
)

// bufClasses are the pooled buffer sizes. A read lands in a full-size
// buffer; a packet that fits a smaller class is copied into one, so that
// memory follows the bytes held rather than 64 KiB per ACK.
var bufClasses = [...]int{256, 2048, 4096 + vnetHdrLen, 9216 + vnetHdrLen, 16384 + vnetHdrLen, 32768 + vnetHdrLen, maxRead}

type vnetHdr struct {
	flags      uint8
	gsoType    uint8
	hdrLen     uint16
	gsoSize    uint16
	csumStart  uint16
	csumOffset uint16
}

func (h *vnetHdr) decode(b []byte) {
	h.flags, h.gsoType = b[0], b[1]
	h.hdrLen = binary.NativeEndian.Uint16(b[2:])
	h.gsoSize = binary.NativeEndian.Uint16(b[4:])
	h.csumStart = binary.NativeEndian.Uint16(b[6:])
	h.csumOffset = binary.NativeEndian.Uint16(b[8:])
}

func (h *vnetHdr) encode(b []byte) {
	b[0], b[1] = h.flags, h.gsoType
	binary.NativeEndian.PutUint16(b[2:], h.hdrLen)
	binary.NativeEndian.PutUint16(b[4:], h.gsoSize)
	binary.NativeEndian.PutUint16(b[6:], h.csumStart)
	binary.NativeEndian.PutUint16(b[8:], h.csumOffset)
}

func (dr *routerDir) initPools() {
	for i := range bufClasses {
		size, class := bufClasses[i], int8(i)
		dr.bufs[i].New = func() any { return &pbuf{b: make([]byte, size), class: class} }
	}
	dr.sps.New = func() any { return new(superPkt) }
}

func (dr *routerDir) getBuf(n int) *pbuf {
	for i, size := range bufClasses {
		if n <= size {
			return dr.bufs[i].Get().(*pbuf)
		}
	}
	panic("lab: packet larger than the largest buffer")
}

func (dr *routerDir) putBuf(p *pbuf) { dr.bufs[p.class].Put(p) }

// release drops n references to sp and recycles it at zero.
func (dr *routerDir) release(sp *superPkt, n int32) {
	if sp.refs.Add(-n) == 0 {
		dr.putBuf(sp.buf)
		*sp = superPkt{}
		dr.sps.Put(sp)
	}
}

// parse fills the packet fields of sp from its buffer and decides whether
// it is a TCP/IPv4 or UDP/IPv4 super-packet to segment. Anything it does
// not understand travels as one packet, untouched.
func (sp *superPkt) parse() {
	b := sp.buf.b[:sp.n]
	sp.vh.decode(b)
	pkt := b[vnetHdrLen:]
	sp.nseg, sp.gso, sp.udp = 1, false, false
	gsoType := sp.vh.gsoType &^ vnetGSOECN
	if gsoType != vnetGSOTCPv4 && gsoType != vnetGSOUDPL4 || sp.vh.gsoSize == 0 {
		return
	}
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return
	}
	iphl := int(pkt[0]&0x0f) * 4
	if iphl < 20 || int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) {
		return
	}
	var hl int
	switch {
	case gsoType == vnetGSOTCPv4 && pkt[9] == unix.IPPROTO_TCP:
		if len(pkt) < iphl+20 {
			return
		}
		hl = iphl + int(pkt[iphl+12]>>4)*4
		if hl < iphl+20 {
			return
		}
	case gsoType == vnetGSOUDPL4 && pkt[9] == unix.IPPROTO_UDP:
		hl = iphl + udpHdrLen
		sp.udp = true
	default:
		return
	}
	if hl > len(pkt) {
		sp.udp = false
		return
	}
	sp.iphl, sp.hl, sp.mss, sp.plen = iphl, hl, int(sp.vh.gsoSize), len(pkt)-hl
	if sp.plen == 0 {
		sp.udp = false
		return
	}
	sp.nseg = (sp.plen + sp.mss - 1) / sp.mss
	sp.gso = true
}

// segSize is the IP length of segment i on the wire.
func (sp *superPkt) segSize(i int) int {
	if !sp.gso {
		return sp.n - vnetHdrLen
	}
	return sp.hl + min(sp.mss, sp.plen-i*sp.mss)
}

// writeTick is the writer's timer period while departures come closer
// together than it: instead of re-arming its timer for every packet (a
// timerfd re-arm and a wake-up per packet, most of the router's CPU at
// 80,000 packets a second on a paravirtualised VM), the writer lets a
// periodic timer wake it and writes everything that has fallen due since,
// as a NIC coalesces its interrupts. A packet then leaves at most
// writeTick late (on top of the wake-up latency); departures further
// apart than writeTick each get a timer of their own and leave on time.
const writeTick = 100 * time.Microsecond

// Each direction has two threads: readLoop reads packets from the input
// TUN device and hands them to the emulator; writeLoop writes the packets
// that are due into the output device. Reading and writing run side by
// side because a write is the dearer of the two: the kernel forwards the
// packet, and delivers it to the receiving host's socket, in the writer's
// system call. Both are locked to their OS threads and sleep in poll(2)
// with plain blocking system calls, so that a wake-up is the kernel's
// alone: parking in Go's poller costs several thread switches per wake-up
// (the poller's thread, then the goroutine's), which on a 2-core VM was
// most of the router's CPU.

// wait blocks in poll(2) until fd is readable or the router stops; it
// returns false when the router stops. fds is the caller's, so that the
// call allocates nothing (unix.Poll's slice would escape to the heap, and
// garbage collection stalls the router).
func (dr *routerDir) wait(fds *[2]unix.PollFd, fd int) bool {
	*fds = [2]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(dr.r.stopFd), Events: unix.POLLIN}}
	for {
		_, _, e := unix.Syscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, 0, 0, 0, 0)
		if e == 0 {
			return fds[1].Revents == 0
		}
		if e != unix.EINTR {
			dr.r.logf("lab: router %s: poll: %v", dr.name, e)
			return false
		}
	}
}

func (dr *routerDir) readLoop() {
	defer dr.r.wg.Done()
	how := lockRouterThread() // for good: the thread ends with the goroutine
	dr.r.schedOnce.Do(func() { dr.r.logf("lab: router threads: %s", how) })
	scratch := dr.getBuf(maxRead)
	fds := new([2]unix.PollFd)
	for {
		n, err := unix.Read(dr.in, scratch.b)
		switch {
		case err == nil:
			scratch = dr.arrive(scratch, n)
		case err == unix.EAGAIN:
			if !dr.wait(fds, dr.in) {
				return
			}
		case err == unix.EINTR:
		default:
			if dr.r.stopped() {
				return
			}
			dr.readErrs.Add(1)
			time.Sleep(time.Millisecond)
		}
	}
}

func (dr *routerDir) writeLoop() {
	defer dr.r.wg.Done()
	how := lockRouterThread() // for good: the thread ends with the goroutine
	dr.r.schedOnce.Do(func() { dr.r.logf("lab: router threads: %s", how) })
	var tick [8]byte
	fds := new([2]unix.PollFd)
	for {
		dr.mu.Lock()
		dr.waiting = false
		now := dr.r.now()
		dr.batch = dr.batch[:0]
		dr.d.Release(now, dr.emit)
		batch := dr.batch
		if len(batch) == 0 {
			dr.schedule(now)
			dr.waiting = true
		}
		dr.mu.Unlock()
		if len(batch) > 0 {
			dr.writeBatch(batch)
			clear(batch)
			continue
		}
		for {
			_, err := unix.Read(dr.timerFd, tick[:])
			if err == nil {
				break
			}
			if err == unix.EAGAIN && !dr.wait(fds, dr.timerFd) {
				return
			}
		}
		dr.mu.Lock()
		if !dr.ticking {
			dr.armed = math.MaxInt64 // a one-shot timer is spent
		}
		dr.mu.Unlock()
	}
}

// arrive hands the packet of n bytes read into scratch to the emulator and
// returns the buffer for the next read: scratch again when the packet was
// copied into a buffer of its size or dropped, a new one when the packet
// keeps it.
func (dr *routerDir) arrive(scratch *pbuf, n int) *pbuf {
	if n <= vnetHdrLen {
		dr.readErrs.Add(1)
		return scratch
	}
	p := scratch
	if n <= bufClasses[len(bufClasses)-2] {
		p = dr.getBuf(n)
		copy(p.b, scratch.b[:n])
	} else {
		scratch = dr.getBuf(maxRead)
	}
	sp := dr.sps.Get().(*superPkt)
	sp.buf, sp.n = p, n
	sp.parse()
	if !sp.gso && n-vnetHdrLen > dr.r.cfg.MTU {
		dr.oversize.Add(1)
		dr.putBuf(p)
		*sp = superPkt{}
		dr.sps.Put(sp)
		return scratch
	}
	sp.refs.Store(int32(sp.nseg))
	var dropped int32
	dr.mu.Lock()
	now := dr.r.now()
	for i := 0; i < sp.nseg; i++ {
		if v := dr.d.Arrive(now, seg{sp, int32(i)}, sp.segSize(i)); v != impair.Queued {
			dropped++
		}
	}
	if dropped < int32(sp.nseg) && dr.waiting {
		// The writer sleeps until armed (or ticks): wake it earlier if
		// this packet is due before then.
		if due, ok := dr.d.NextDue(); ok && due < dr.armed {
			dr.arm(due, now)
		}
	}
	dr.mu.Unlock()
	if dropped > 0 {
		dr.release(sp, dropped)
	}
	return scratch
}

// arm sets the timer, one-shot, for router-clock time at (now is the
// current time). Call with mu held.
func (dr *routerDir) arm(at, now int64) {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(max(at-now, 1))}
	if unix.TimerfdSettime(dr.timerFd, 0, &its, nil) == nil {
		dr.armed, dr.ticking = at, false
	}
}

// schedule sets the timer for the next departure: periodic (writeTick)
// while departures come closer together than that, one-shot for a
// departure further away, off when the direction is empty. It makes a
// system call only when that changes. Call with mu held.
func (dr *routerDir) schedule(now int64) {
	due, ok := dr.d.NextDue()
	switch {
	case !ok:
		if dr.ticking || dr.armed != math.MaxInt64 {
			_ = unix.TimerfdSettime(dr.timerFd, 0, &unix.ItimerSpec{}, nil)
		}
		dr.armed, dr.ticking = math.MaxInt64, false
	case due-now <= int64(writeTick):
		if !dr.ticking {
			its := unix.ItimerSpec{Value: unix.NsecToTimespec(max(due-now, 1)), Interval: unix.NsecToTimespec(int64(writeTick))}
			if unix.TimerfdSettime(dr.timerFd, 0, &its, nil) == nil {
				// Ticking: an arrival is never more than a tick from a
				// wake-up, so the reader need not re-arm (armed is below
				// any due time).
				dr.armed, dr.ticking = math.MinInt64, true
			}
		}
	case dr.ticking || due < dr.armed:
		dr.arm(due, now)
	}
}

// writeBatch writes the released packets in order, joining runs of
// consecutive segments of one super-packet.
func (dr *routerDir) writeBatch(batch []outItem) {
	for i := 0; i < len(batch); {
		it := batch[i]
		sp := it.s.sp
		j := i
		if it.copies == 1 && sp.gso {
			for j+1 < len(batch) && batch[j+1].s.sp == sp && batch[j+1].s.idx == batch[j].s.idx+1 && batch[j+1].copies == 1 {
				j++
			}
		}
		first, last := int(it.s.idx), int(batch[j].s.idx)
		for c := 0; c < it.copies; c++ {
			if err := dr.writeSegs(sp, first, last); err != nil {
				dr.writeErrs.Add(uint64(last - first + 1))
			}
		}
		dr.release(sp, int32(last-first+1))
		i = j + 1
	}
}

// writeSegs writes segments first..last of sp as one packet: the original
// bytes when that is the whole super-packet, otherwise a rebuilt header
// (lengths, sequence number, IP ID, flags, checksums) and the payload slice.
func (dr *routerDir) writeSegs(sp *superPkt, first, last int) error {
	dr.writes.Add(1)
	for {
		var err error
		if !sp.gso || (first == 0 && last == sp.nseg-1) {
			_, err = unix.Write(dr.out, sp.buf.b[:sp.n])
		} else {
			// writev(2) by hand: unix.Writev allocates its iovecs.
			h, payload := sp.segment(dr.hdr[:], first, last)
			dr.iov[0].Base = &h[0]
			dr.iov[0].SetLen(len(h))
			dr.iov[1].Base = &payload[0]
			dr.iov[1].SetLen(len(payload))
			_, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(dr.out), uintptr(unsafe.Pointer(&dr.iov[0])), 2)
			if e != 0 {
				err = e
			}
		}
		if err != unix.EINTR {
			return err
		}
	}
}

// segment builds in h (at least vnetHdrLen+sp.hl bytes) the virtio-net
// header and the IPv4/TCP or IPv4/UDP header of segments first..last of
// the super-packet sp, and returns that header and the payload slice that
// follows it. The result is one packet, or a smaller super-packet when
// last > first; either way the TCP or UDP checksum is left to the kernel
// (NEEDS_CSUM with the pseudo-header sum in place), as in what it read.
func (sp *superPkt) segment(h []byte, first, last int) (hdr, payload []byte) {
	pkt := sp.buf.b[vnetHdrLen:sp.n]
	off := first * sp.mss
	end := min(sp.plen, (last+1)*sp.mss)
	plen := end - off
	h = h[:vnetHdrLen+sp.hl]
	ip := h[vnetHdrLen:]
	copy(ip, pkt[:sp.hl])
	// IPv4: total length, ID (the kernel numbers a super-packet's
	// segments consecutively), header checksum.
	binary.BigEndian.PutUint16(ip[2:], uint16(sp.hl+plen))
	binary.BigEndian.PutUint16(ip[4:], binary.BigEndian.Uint16(pkt[4:])+uint16(first))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^checksum(ip[:sp.iphl], 0))
	l4 := ip[sp.iphl:]
	l4Len := sp.hl - sp.iphl + plen
	proto, csumField, gsoType := byte(unix.IPPROTO_TCP), tcpChecksumField, uint8(vnetGSOTCPv4)
	if sp.udp {
		// UDP: the length of what this packet (or smaller super-packet)
		// carries, as the kernel sets it on a GSO send.
		proto, csumField, gsoType = unix.IPPROTO_UDP, udpChecksumField, vnetGSOUDPL4
		binary.BigEndian.PutUint16(l4[4:], uint16(l4Len))
	} else {
		// TCP: sequence number; CWR only on the first segment, FIN and
		// PSH only on the last.
		binary.BigEndian.PutUint32(l4[4:], binary.BigEndian.Uint32(pkt[sp.iphl+4:])+uint32(off))
		if first > 0 {
			l4[13] &^= tcpFlagCWR
		}
		if last < sp.nseg-1 {
			l4[13] &^= tcpFlagFIN | tcpFlagPSH
		}
	}
	var ph [12]byte
	copy(ph[0:8], ip[12:20])
	ph[9] = proto
	binary.BigEndian.PutUint16(ph[10:], uint16(l4Len))
	binary.BigEndian.PutUint16(l4[csumField:], checksum(ph[:], 0))
	vh := vnetHdr{flags: vnetNeedsCsum, csumStart: uint16(sp.iphl), csumOffset: uint16(csumField), hdrLen: uint16(sp.hl)}
	if last > first {
		vh.gsoType = gsoType
		if first == 0 && !sp.udp {
			vh.gsoType |= sp.vh.gsoType & vnetGSOECN
		}
		vh.gsoSize = uint16(sp.mss)
	} else {
		vh.gsoType = vnetGSONone
	}
	vh.encode(h)
	return h, pkt[sp.hl+off : sp.hl+end]
}

// checksum is the ones'-complement sum of b folded to 16 bits (not
// complemented), added to initial.
func checksum(b []byte, initial uint32) uint16 {
	s := initial
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}
