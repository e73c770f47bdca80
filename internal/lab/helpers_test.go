//go:build linux

package lab

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/labtest"
)

// newRouterLab builds a ─ r ─ b with the impairment router in r.
func newRouterLab(t *testing.T, mtu int, spec RouterSpec, sysctls map[string]string) *Lab {
	t.Helper()
	topo := Chain(mtu, sysctls)
	spec.Host, spec.A, spec.B = "r", "a", "b"
	topo.Router = &spec
	return New(t, topo)
}

// helperHost is h as labtest runs helper processes in it.
func helperHost(h *Host) labtest.Host {
	return labtest.Host{Name: h.Name, Addr: h.Addr, Command: h.Command}
}

// startServer starts a wireperf server, a process of its own inside h
// (see labtest), bound to h's address, and returns its port. It serves
// tests until the test ends.
func startServer(t *testing.T, h *Host) int {
	t.Helper()
	return labtest.StartServer(t, helperHost(h))
}

// tcpResult is what a bulk TCP transfer measured.
type tcpResult struct {
	Bytes    int64         // received by the receiver
	Elapsed  time.Duration // receiver: first byte to EOF
	Goodput  float64       // bit/s, receiver's view
	Sender   tcpInfo       // sender's TCP_INFO at the end of sending
	Receiver tcpInfo       // receiver's TCP_INFO at EOF
	Samples  []tcpInfo     // sender's TCP_INFO every 100 ms
}

type tcpOpts struct {
	Duration time.Duration // how long the sender sends
	MaxBytes int64         // and at most this much (0: 8 GiB)
	RcvBuf   int           // SO_RCVBUF on the receiver (0: autotuning)
	SndBuf   int           // SO_SNDBUF on the sender (0: autotuning)
	Port     int
	Verify   bool // check every byte (each 8-byte word holds its own stream offset)
}

// fillPattern writes the stream pattern for offset off into b (off and
// len(b) multiples of 8).
func fillPattern(b []byte, off int64) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.BigEndian.PutUint64(b[i:], uint64(off+int64(i)))
	}
}

// checkPattern verifies b, which starts at stream offset off.
func checkPattern(b []byte, off int64) error {
	var word [8]byte
	for i := range b {
		o := off + int64(i)
		w := o &^ 7
		binary.BigEndian.PutUint64(word[:], uint64(w))
		if b[i] != word[o-w] {
			return fmt.Errorf("byte %d of the stream is %#x, want %#x", o, b[i], word[o-w])
		}
	}
	return nil
}

// tcpBulk sends from host from to host to for o.Duration (bounded by
// o.MaxBytes) and measures the goodput at the receiver.
func tcpBulk(t *testing.T, from, to *Host, o tcpOpts) tcpResult {
	t.Helper()
	if o.MaxBytes == 0 {
		o.MaxBytes = 8 << 30
	}
	if o.Port == 0 {
		o.Port = 5201
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Duration+60*time.Second)
	defer cancel()
	lc := &net.ListenConfig{}
	if o.RcvBuf > 0 {
		// Set on the listener so that the accepted socket starts with it
		// and the window scale is chosen to fit.
		lc.Control = func(network, address string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, o.RcvBuf)
			})
			return errors.Join(err, serr)
		}
	}
	addr := net.JoinHostPort(to.Addr.String(), fmt.Sprint(o.Port))
	ln, err := to.Listen(ctx, lc, "tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	type rx struct {
		n       int64
		elapsed time.Duration
		info    tcpInfo
		err     error
	}
	rxc := make(chan rx, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			rxc <- rx{err: err}
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(o.Duration + 50*time.Second))
		buf := make([]byte, 1<<20)
		var n int64
		var first time.Time
		for {
			k, err := c.Read(buf)
			if k > 0 && first.IsZero() {
				first = time.Now()
			}
			if o.Verify && k > 0 {
				if verr := checkPattern(buf[:k], n); verr != nil {
					rxc <- rx{err: verr}
					return
				}
			}
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				rxc <- rx{err: err}
				return
			}
		}
		info, _ := getTCPInfo(c)
		rxc <- rx{n: n, elapsed: time.Since(first), info: info}
	}()

	d := &net.Dialer{}
	if o.SndBuf > 0 {
		d.Control = func(network, address string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, o.SndBuf)
			})
			return errors.Join(err, serr)
		}
	}
	c, err := from.Dial(ctx, d, "tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	var res tcpResult
	var mu sync.Mutex
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tk.C:
				if ti, err := getTCPInfo(c); err == nil {
					mu.Lock()
					res.Samples = append(res.Samples, ti)
					mu.Unlock()
				}
			}
		}
	}()
	buf := make([]byte, 256<<10)
	end := time.Now().Add(o.Duration)
	_ = c.SetWriteDeadline(end)
	var sent int64
	for sent < o.MaxBytes {
		chunk := buf[:min(int64(len(buf)), o.MaxBytes-sent)]
		if o.Verify {
			// Writes may be partial: always continue the pattern from sent.
			fillPattern(buf, sent&^7)
			chunk = buf[sent&7 : min(int64(len(buf)), o.MaxBytes-sent+sent&7)]
		}
		k, err := c.Write(chunk)
		sent += int64(k)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			t.Fatalf("send: %v", err)
		}
	}
	close(stopSampling)
	<-sampled
	res.Sender, _ = getTCPInfo(c)
	_ = c.SetWriteDeadline(time.Time{})
	// Closing sends FIN after the queued data; the receiver reads to EOF.
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	r := <-rxc
	c.Close()
	if r.err != nil {
		t.Fatalf("receive: %v", r.err)
	}
	res.Bytes, res.Elapsed, res.Receiver = r.n, r.elapsed, r.info
	if r.elapsed > 0 {
		res.Goodput = float64(r.n) * 8 / r.elapsed.Seconds()
	}
	return res
}

// udpResult is what the receiver of a sequence-numbered UDP stream saw.
type udpResult struct {
	Sent, Received, Lost, Duplicates, Reordered uint64
	RcvbufErrors                                uint64   // delta on the receiving host
	Missing                                     []uint64 // sequence numbers that never arrived
}

// udpStream sends n datagrams of size bytes (each starting with a 64-bit
// sequence number) from from to to at pps packets per second, then waits
// for stragglers and counts what arrived, RFC 4737 style.
func udpStream(t *testing.T, from, to *Host, n, size, pps int, linger time.Duration) udpResult {
	t.Helper()
	ctx := context.Background()
	addr := net.JoinHostPort(to.Addr.String(), "5202")
	lc := &net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<20)
		})
		return errors.Join(err, serr)
	}}
	pc, err := to.ListenPacket(ctx, lc, "udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	before, err := to.UDPStats()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := from.Dial(ctx, nil, "udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	var res udpResult
	done := make(chan struct{})
	seen := make([]uint8, n)
	var senderDone atomic.Int64 // unix nanoseconds when the sender finished
	hardStop := time.Now().Add(time.Duration(n)*time.Second/time.Duration(pps) + 60*time.Second)
	go func() {
		defer close(done)
		buf := make([]byte, 65536)
		next := uint64(0)
		last := time.Now()
		for {
			// Short deadlines: the receiver ends only when the sender has
			// finished and nothing came for linger, so a descheduled sender
			// on a busy machine does not end the stream early.
			_ = pc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			k, _, err := pc.ReadFrom(buf)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					return
				}
				if d := senderDone.Load(); d != 0 && time.Since(last) >= linger && time.Since(time.Unix(0, d)) >= linger {
					return
				}
				if time.Now().After(hardStop) {
					return
				}
				continue
			}
			last = time.Now()
			if k < 8 {
				continue
			}
			seq := binary.BigEndian.Uint64(buf)
			if seq >= uint64(n) {
				continue
			}
			if seen[seq] > 0 {
				res.Duplicates++
				continue
			}
			seen[seq]++
			res.Received++
			if seq < next {
				res.Reordered++
			} else {
				next = seq + 1
			}
		}
	}()
	payload := make([]byte, size)
	gap := time.Second / time.Duration(pps)
	start := time.Now()
	for i := 0; i < n; i++ {
		if due := start.Add(time.Duration(i) * gap); time.Until(due) > 0 {
			time.Sleep(time.Until(due)) // load generator: paces the UDP stream at pps
		}
		binary.BigEndian.PutUint64(payload, uint64(i))
		if _, err := conn.Write(payload); err != nil {
			t.Fatalf("udp send %d: %v", i, err)
		}
		res.Sent++
	}
	senderDone.Store(time.Now().UnixNano())
	<-done
	after, err := to.UDPStats()
	if err != nil {
		t.Fatal(err)
	}
	res.RcvbufErrors = after["RcvbufErrors"] - before["RcvbufErrors"]
	res.Lost = res.Sent - res.Received
	for i, v := range seen {
		if v == 0 {
			res.Missing = append(res.Missing, uint64(i))
		}
	}
	return res
}

// meanWindowRTT averages the advertised window (bytes) and the RTT
// (seconds) over the TCP_INFO samples that have both, which wndRTT reads
// (RTT in µs); n is how many had.
func meanWindowRTT[S any](samples []S, wndRTT func(S) (wnd uint64, rttus uint32)) (wnd, rtt float64, n int) {
	for _, s := range samples {
		w, r := wndRTT(s)
		if w == 0 || r == 0 {
			continue
		}
		wnd += float64(w)
		rtt += float64(r) / 1e6
		n++
	}
	if n > 0 {
		wnd, rtt = wnd/float64(n), rtt/float64(n)
	}
	return wnd, rtt, n
}

func mbit(bps float64) string { return fmt.Sprintf("%.1f Mbit/s", bps/1e6) }

func nsLeft(prefix string) []string {
	ents, _ := os.ReadDir("/run/netns")
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// settledStats waits until the router has read all sent packets of the
// a→b direction (or the kernel counted them as TUN queue drops) and holds
// none, then returns its counters. It waits at most 10 s.
func settledStats(t *testing.T, l *Lab, sent uint64) RouterStats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := l.RouterStats()
		if err != nil {
			t.Fatal(err)
		}
		ab := st.AtoB
		if ab.Counters.In+ab.TunIn.TxDropped >= sent && ab.QueuedPackets == 0 || time.Now().After(deadline) {
			return st
		}
		time.Sleep(50 * time.Millisecond) // bounded poll: the router's counters, until the deadline above
	}
}

// bestOf is labtest.BestOf, by the name the lab's tests use.
func bestOf[T any](t *testing.T, n int, measure func(attempt int) (T, bool)) (T, bool) {
	t.Helper()
	return labtest.BestOf(t, n, measure)
}
