// Package udpmux shares a server's UDP port among tests. A shared socket
// receives each stream's first datagram (its hello); the mux then gives
// that stream a socket of its own, bound to the same port and connected to
// the sender, so that the kernel delivers the rest of the stream to it and
// each test reads only its own datagrams. iperf3 sets up UDP streams the
// same way, so native and iperf3 tests share the port.
package udpmux

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by Expect once the mux is closed.
var ErrClosed = errors.New("udpmux: closed")

// maxHello bounds the hello datagrams the mux reads.
const maxHello = 2048

// Mux owns one UDP port.
type Mux struct {
	conn  *net.UDPConn
	laddr *net.UDPAddr

	mu      sync.Mutex
	waiters []*waiter
	closed  bool
	// early holds datagrams that arrived before anyone expected them, for
	// a moment: a peer may send its one hello just before the test that
	// wants it registers (iperf3 sends its connect message once).
	early []earlyDatagram

	unmatched atomic.Int64
	done      chan struct{}
}

type waiter struct {
	match func(payload []byte, from *net.UDPAddr) bool
	ch    chan accepted
}

type earlyDatagram struct {
	payload []byte
	from    *net.UDPAddr
	at      time.Time
}

// Limits of the early-datagram memory.
const (
	earlyKeep = 64
	earlyTTL  = 3 * time.Second
)

type accepted struct {
	conn  *net.UDPConn
	first []byte
	from  *net.UDPAddr
	err   error
}

// Listen binds the shared socket. addr is host:port as for net.ListenUDP;
// an empty host listens on every address, IPv4 and IPv6.
func Listen(addr string) (*Mux, error) {
	lc := net.ListenConfig{Control: reuseAddr}
	pc, err := lc.ListenPacket(context.Background(), "udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on UDP %s: %w", addr, err)
	}
	m := &Mux{conn: pc.(*net.UDPConn), done: make(chan struct{})}
	m.laddr = m.conn.LocalAddr().(*net.UDPAddr)
	go m.loop()
	return m, nil
}

// Addr is the shared socket's address.
func (m *Mux) Addr() *net.UDPAddr { return m.laddr }

// Unmatched counts datagrams that no test expected.
func (m *Mux) Unmatched() int64 { return m.unmatched.Load() }

// Expect waits for the first datagram that match accepts and returns a
// socket connected to its sender, the datagram, and the sender's address.
// match runs on the mux's goroutine and must be quick.
func (m *Mux) Expect(ctx context.Context, match func(payload []byte, from *net.UDPAddr) bool) (*net.UDPConn, []byte, *net.UDPAddr, error) {
	w := &waiter{match: match, ch: make(chan accepted, 1)}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, nil, nil, ErrClosed
	}
	if d, ok := m.takeEarly(match); ok {
		m.mu.Unlock()
		conn, err := m.connect(d.from)
		return conn, d.payload, d.from, err
	}
	m.waiters = append(m.waiters, w)
	m.mu.Unlock()
	select {
	case a := <-w.ch:
		return a.conn, a.first, a.from, a.err
	case <-ctx.Done():
		if !m.remove(w) {
			// The mux matched it just now: take the socket and close it.
			if a := <-w.ch; a.conn != nil {
				_ = a.conn.Close()
			}
		}
		return nil, nil, nil, ctx.Err()
	case <-m.done:
		return nil, nil, nil, ErrClosed
	}
}

func (m *Mux) remove(w *waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.waiters {
		if x == w {
			m.waiters = append(m.waiters[:i], m.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// take removes and returns the first waiter that accepts the datagram; a
// datagram nobody expects is kept for a moment in case its test is about
// to ask for it.
func (m *Mux) take(payload []byte, from *net.UDPAddr) *waiter {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, w := range m.waiters {
		if w.match(payload, from) {
			m.waiters = append(m.waiters[:i], m.waiters[i+1:]...)
			return w
		}
	}
	now := time.Now()
	keep := m.early[:0]
	for _, d := range m.early {
		if now.Sub(d.at) < earlyTTL {
			keep = append(keep, d)
		}
	}
	m.early = keep
	if len(m.early) >= earlyKeep {
		m.early = m.early[1:]
	}
	m.early = append(m.early, earlyDatagram{payload: append([]byte(nil), payload...), from: from, at: now})
	return nil
}

// takeEarly removes and returns the oldest recent early datagram that
// match accepts. The caller holds m.mu.
func (m *Mux) takeEarly(match func([]byte, *net.UDPAddr) bool) (earlyDatagram, bool) {
	now := time.Now()
	for i, d := range m.early {
		if now.Sub(d.at) < earlyTTL && match(d.payload, d.from) {
			m.early = append(m.early[:i], m.early[i+1:]...)
			return d, true
		}
	}
	return earlyDatagram{}, false
}

func (m *Mux) loop() {
	defer close(m.done)
	buf := make([]byte, maxHello)
	for {
		n, from, err := m.conn.ReadFromUDP(buf)
		if err != nil {
			if m.isClosed() {
				return
			}
			continue // ICMP errors surface here on some systems; the port stays up
		}
		payload := buf[:n]
		w := m.take(payload, from)
		if w == nil {
			m.unmatched.Add(1)
			continue
		}
		conn, err := m.connect(from)
		w.ch <- accepted{conn: conn, first: append([]byte(nil), payload...), from: from, err: err}
	}
}

// connect makes a socket on the mux's port connected to peer.
func (m *Mux) connect(peer *net.UDPAddr) (*net.UDPConn, error) {
	local := &net.UDPAddr{IP: m.laddr.IP, Port: m.laddr.Port, Zone: m.laddr.Zone}
	if local.IP.IsUnspecified() {
		local.IP = nil
	}
	d := net.Dialer{LocalAddr: local, Control: reuseAddr}
	c, err := d.Dial("udp", peer.String())
	if err != nil {
		return nil, fmt.Errorf("udpmux: connecting a socket to %s: %w", peer, err)
	}
	return c.(*net.UDPConn), nil
}

func (m *Mux) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Close stops the mux; sockets it handed out stay open.
func (m *Mux) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	err := m.conn.Close()
	<-m.done
	return err
}
