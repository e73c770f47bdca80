package session_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/spec"
)

// tosCapture records the TOS byte of the IPv4 TCP packets to or from a
// port that cross loopback, from a packet socket (root's), until stop.
type tosCapture struct {
	fd   int
	done chan struct{}
	stop chan struct{}
	mu   sync.Mutex
	seen []capturedPacket
}

type capturedPacket struct {
	tos              int
	srcPort, dstPort int
	payload          bool
}

func captureLoopback(t *testing.T, port int) *tosCapture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("reading loopback's packets needs root (a packet socket)")
	}
	// Only the test's own packets, and only their headers, reach the
	// socket: other tests' loopback traffic would fill its buffer.
	filter, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 9, Size: 1}, // IPv4 protocol
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.IPPROTO_TCP, SkipTrue: 6},
		bpf.LoadAbsolute{Off: 6, Size: 2}, // flags and fragment offset
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff, SkipTrue: 4},
		bpf.LoadMemShift{Off: 0}, // X = the IPv4 header's length
		bpf.LoadIndirect{Off: 0, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(port), SkipTrue: 3},
		bpf.LoadIndirect{Off: 2, Size: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(port), SkipTrue: 1},
		bpf.RetConstant{Val: 0},
		bpf.RetConstant{Val: 128},
	})
	if err != nil {
		t.Fatal(err)
	}
	prog := make([]unix.SockFilter, len(filter))
	for i, in := range filter {
		prog[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	proto := int(htons(unix.ETH_P_IP))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		t.Fatalf("packet socket: %v", err)
	}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
		_ = unix.Close(fd)
		t.Fatalf("the capture's filter: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_IP), Ifindex: lo.Index}); err != nil {
		_ = unix.Close(fd)
		t.Fatal(err)
	}
	// The read wakes every 50 ms to see whether to stop.
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 50_000})
	c := &tosCapture{fd: fd, done: make(chan struct{}), stop: make(chan struct{})}
	go c.read()
	t.Cleanup(c.close)
	return c
}

func (c *tosCapture) read() {
	defer close(c.done)
	buf := make([]byte, 128) // the IPv4 and TCP headers; the rest is cut
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if err != nil || n < 20 || buf[0]>>4 != 4 || buf[9] != unix.IPPROTO_TCP {
			continue
		}
		ihl := int(buf[0]&0x0f) * 4
		if n < ihl+14 {
			continue
		}
		tcp := buf[ihl:n]
		total := int(binary.BigEndian.Uint16(buf[2:4]))
		p := capturedPacket{
			tos:     int(buf[1]),
			srcPort: int(binary.BigEndian.Uint16(tcp[0:2])), dstPort: int(binary.BigEndian.Uint16(tcp[2:4])),
			payload: total > ihl+int(tcp[12]>>4)*4,
		}
		c.mu.Lock()
		c.seen = append(c.seen, p)
		c.mu.Unlock()
	}
}

func (c *tosCapture) close() {
	select {
	case <-c.stop:
		return
	default:
	}
	close(c.stop)
	<-c.done
	_ = unix.Close(c.fd)
}

func (c *tosCapture) packets() []capturedPacket {
	c.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func portOf(t *testing.T, addr string) int {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return int(ap.Port())
}

// TestStreamTOSOnTheWire: a --bidir test of four streams each way with a
// TOS per stream, as rrul runs it, against a server with the default
// limits. The packets on loopback say what each end set: every packet a
// stream's sender sent with data, and the packets its receiver sent back,
// carry that stream's class, so each class runs once each way.
func TestStreamTOSOnTheWire(t *testing.T) {
	port := startServer(t)
	capture := captureLoopback(t, port)
	classes := []int{0x00, 0x20, 0xa0, 0xb8}
	s := spec.Default()
	// 20 Mbit/s a stream for a second (the kernel paces each sender):
	// enough packets to read, few bytes.
	s.Streams, s.Bidir, s.StreamTOS, s.Duration, s.Rate = len(classes), true, classes, time.Second, 20e6
	res, err := runClient(t, port, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	packets := capture.packets()
	type key struct {
		id         int
		fromClient bool
	}
	byClientPort := map[int]int{}
	serverPorts := map[int]bool{}
	for _, st := range res.Local.Streams {
		byClientPort[portOf(t, st.LocalAddr)] = st.ID
		serverPorts[portOf(t, st.RemoteAddr)] = true
	}
	if len(byClientPort) != s.DataConns() {
		t.Fatalf("%d data connections in the client's report, want %d", len(byClientPort), s.DataConns())
	}
	withTOS := map[key]int{}
	dataTOS := map[int]map[int]bool{} // stream → the TOS bytes its sender's data carried
	for _, p := range packets {
		id, fromClient := byClientPort[p.srcPort], true
		if !serverPorts[p.dstPort] {
			id, fromClient = byClientPort[p.dstPort], false
			if !serverPorts[p.srcPort] {
				continue
			}
		}
		if id == 0 {
			continue
		}
		want := s.TOSOn(id)
		sender := fromClient == s.ClientSendsOn(id)
		if p.payload && sender {
			if dataTOS[id] == nil {
				dataTOS[id] = map[int]bool{}
			}
			dataTOS[id][p.tos] = true
		}
		if p.tos == want {
			withTOS[key{id, fromClient}]++
		}
	}
	up := map[int]int{}
	down := map[int]int{}
	for id := 1; id <= s.DataConns(); id++ {
		for _, fromClient := range []bool{true, false} {
			if withTOS[key{id, fromClient}] == 0 {
				end := "server"
				if fromClient {
					end = "client"
				}
				t.Errorf("stream %d: no packet from the %s with its TOS %#x", id, end, s.TOSOn(id))
			}
		}
		if len(dataTOS[id]) != 1 {
			t.Errorf("stream %d: its sender's data carried TOS %v, want only %#x", id, dataTOS[id], s.TOSOn(id))
			continue
		}
		for tos := range dataTOS[id] {
			if s.ClientSendsOn(id) {
				up[tos]++
			} else {
				down[tos]++
			}
		}
	}
	for _, tos := range classes {
		if up[tos] != 1 || down[tos] != 1 {
			t.Errorf("TOS %#x: %d streams up and %d down, want one each way", tos, up[tos], down[tos])
		}
	}
	t.Logf("%d packets read; with their stream's TOS: %v", len(packets), withTOS)
	if d := res.Directions(); len(d) != 2 || d[0].Received.Bytes == 0 || d[1].Received.Bytes == 0 {
		t.Errorf("directions %+v: want data both ways", d)
	}
}
