package udpflow

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

// gsoMaxSegments is the kernel's UDP_MAX_SEGMENTS on older kernels; newer
// ones allow more, and 64 already makes a send of most of 64 KiB.
const gsoMaxSegments = 64

// gsoMaxBytes keeps a GSO send under the 64 KiB an IP datagram can hold.
const gsoMaxBytes = 65000

// recvBatch is how many messages one recvmmsg asks for.
const recvBatch = 32

type batcher interface {
	ReadBatch([]ipv4.Message, int) (int, error)
	WriteBatch([]ipv4.Message, int) (int, error)
}

type linuxIO struct {
	conn    *net.UDPConn
	batch   batcher
	feat    Features
	segCmsg []byte
	segSize int

	sendMsgs []ipv4.Message
	recvMsgs []ipv4.Message
	segs     []Segment

	// The receive path after takeOver (recv_block_linux.go).
	tookOver bool
	rfd      int // -1: reads go through Go's poller
	mmsgs    []unix.Mmsghdr
	iovs     []unix.Iovec
	deadline atomic.Int64  // unix ns at which receives end; 0: none
	coalesce time.Duration // the wait before the next read (coalesce.go)

	// The send path after takeOverSend (send_raw_linux.go).
	sendTook bool
	raw      rawSend

	// ovfl is the highest SO_RXQ_OVFL count the messages carried: the
	// socket's drops up to the last queued message, when SO_MEMINFO
	// cannot be read at the end (drops.go).
	ovfl   uint32
	ovflOn bool
}

func newBatchIO(conn *net.UDPConn, size int, wantGSO bool) (batchIO, error) {
	io := &linuxIO{conn: conn, feat: Features{Batch: true}, rfd: -1, raw: rawSend{fd: -1}}
	if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() == nil {
		io.batch = ipv6.NewPacketConn(conn)
	} else {
		io.batch = ipv4.NewPacketConn(conn)
	}
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	_ = raw.Control(func(fd uintptr) {
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil {
			io.feat.KernelTimestamps = true
		}
		// The socket's own drop count, exact and per socket, where
		// /proc/net/snmp's RcvbufErrors is per namespace.
		io.ovflOn = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1) == nil
		if wantGSO && unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_GRO, 1) == nil {
			io.feat.GRO = true
		}
	})
	io.feat.GSO = wantGSO // confirmed or withdrawn by the first send
	bufLen := size
	if io.feat.GRO {
		bufLen = 65535
	}
	io.recvMsgs = make([]ipv4.Message, recvBatch)
	for i := range io.recvMsgs {
		io.recvMsgs[i].Buffers = [][]byte{prefault(make([]byte, bufLen+1))} // +1 tells a longer datagram apart
		io.recvMsgs[i].OOB = make([]byte, 128)
	}
	segs := make([]Segment, recvBatch*gsoMaxSegments)
	clear(segs) // its pages mapped now too (prefault)
	io.segs = segs[:0]
	return io, nil
}

// prefault writes to every page of b, so that the kernel maps them now,
// before the test, and not during its first reads. A fresh buffer's
// pages are mapped only when first written: a GRO receiver's 32 buffers
// of 64 KiB are 512 pages, and on a VM whose page faults are slow the
// first reads of a test took tens of milliseconds while the datagrams
// queued. At 10 Gbit/s a receiver that did not prefault lost up to 1.1%
// of a test's datagrams, in its first 100 ms; one that prefaults lost
// none there in 8 runs of 9 (bench/RESULTS.md).
func prefault(b []byte) []byte {
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 0
	}
	return b
}

func (io *linuxIO) features() Features { return io.feat }

func (io *linuxIO) maxSendBatch(size int) int {
	if io.feat.GSO {
		return max(1, min(gsoMaxSegments, gsoMaxBytes/size))
	}
	return 64
}

func (io *linuxIO) send(buf []byte, size, n int) (int, error) {
	if !io.sendTook {
		io.sendTook = true
		io.takeOverSend()
	}
	if io.feat.GSO && n > 1 {
		if io.segSize != size {
			io.segCmsg, io.segSize = segmentCmsg(size), size
		}
		// One send carries at most what fits an IP datagram.
		per := io.maxSendBatch(size)
		sent := 0
		for sent < n {
			k := min(per, n-sent)
			var err error
			if io.raw.fd >= 0 {
				err = io.sendGSORaw(buf[sent*size : (sent+k)*size])
			} else {
				_, _, err = io.conn.WriteMsgUDP(buf[sent*size:(sent+k)*size], io.segCmsg, nil)
			}
			if err != nil {
				if sent == 0 && gsoUnsupported(err) {
					io.feat.GSO = false // the kernel or the route cannot segment: batch instead
					break
				}
				return sent, err
			}
			sent += k
		}
		if io.feat.GSO {
			return sent, nil
		}
	}
	if io.raw.fd >= 0 {
		return io.sendmmsgRaw(buf, size, n)
	}
	if cap(io.sendMsgs) < n {
		io.sendMsgs = make([]ipv4.Message, n)
		for i := range io.sendMsgs {
			io.sendMsgs[i].Buffers = make([][]byte, 1)
		}
	}
	msgs := io.sendMsgs[:n]
	for i := range msgs {
		msgs[i].Buffers[0] = buf[i*size : (i+1)*size]
	}
	sent := 0
	for sent < n {
		k, err := io.batch.WriteBatch(msgs[sent:], 0)
		sent += k
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

func gsoUnsupported(err error) bool {
	return errors.Is(err, unix.EIO) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOPROTOOPT) || errors.Is(err, unix.EOPNOTSUPP)
}

func (io *linuxIO) recv() ([]Segment, error) {
	if !io.tookOver {
		io.tookOver = true
		io.takeOver()
	}
	var n int
	var err error
	if io.rfd >= 0 {
		n, err = io.recvBlocking()
	} else {
		for i := range io.recvMsgs {
			io.recvMsgs[i].OOB = io.recvMsgs[i].OOB[:cap(io.recvMsgs[i].OOB)]
		}
		n, err = io.batch.ReadBatch(io.recvMsgs, 0)
	}
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	segs := io.segs[:0]
	for i := 0; i < n; i++ {
		m := &io.recvMsgs[i]
		a := parseAncillary(m.OOB[:m.NN])
		io.ovfl = max(io.ovfl, a.drops)
		t := a.recvNs
		if t == 0 {
			t = now
		}
		data := m.Buffers[0][:m.N]
		step := len(data)
		if a.segSize > 0 && a.segSize < len(data) {
			step = a.segSize
		}
		for off, k := 0, 0; off < len(data); off, k = off+step, k+1 {
			end := min(off+step, len(data))
			segs = append(segs, Segment{Payload: data[off:end], RecvNs: t, Shared: k > 0})
		}
	}
	io.segs = segs
	return segs, nil
}
