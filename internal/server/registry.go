package server

import (
	"crypto/rand"
	"fmt"
	"net"
	"sync"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// registry admits tests under the limits and routes data connections to
// them by token.
type registry struct {
	limits Limits

	mu       sync.Mutex
	tests    map[proto.Token]*entry
	slots    int // tests running, native and iperf3
	perPeer  map[string]int
	draining bool
}

type entry struct {
	data chan session.DataConn
	peer string
}

// refusal is a test the limits turned away; its text goes to the client.
type refusal struct{ reason string }

func (r refusal) Error() string { return r.reason }

func refusef(format string, args ...any) error { return refusal{fmt.Sprintf(format, args...)} }

func newRegistry(l Limits) *registry {
	return &registry{limits: l, tests: map[proto.Token]*entry{}, perPeer: map[string]int{}}
}

func peerHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, _ := net.SplitHostPort(a.String())
	return host
}

// reserve takes a slot for a test from peer under the limits; release
// gives it back. iperf3 tests take slots this way, without a token.
func (r *registry) reserve(peer net.Addr, s spec.Spec) (release func(), err error) {
	if err := r.limits.check(s); err != nil {
		return nil, refusal{err.Error()}
	}
	host := peerHost(peer)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.draining {
		return nil, refusef("server is shutting down")
	}
	if r.limits.MaxTests > 0 && r.slots >= r.limits.MaxTests {
		return nil, refusef("server is busy: %d tests running, its limit is %d (--max-tests); try again later", r.slots, r.limits.MaxTests)
	}
	if r.limits.MaxTestsPerClient > 0 && r.perPeer[host] >= r.limits.MaxTestsPerClient {
		return nil, refusef("server is busy: %d tests already running from %s, its limit is %d (--max-tests-per-client)", r.perPeer[host], host, r.limits.MaxTestsPerClient)
	}
	r.slots++
	r.perPeer[host]++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.slots--
			if r.perPeer[host]--; r.perPeer[host] <= 0 {
				delete(r.perPeer, host)
			}
			r.mu.Unlock()
		})
	}, nil
}

// Admit implements session.Registrar: a slot and a token.
func (r *registry) Admit(peer net.Addr, s spec.Spec) (*session.Admission, error) {
	free, err := r.reserve(peer, s)
	if err != nil {
		return nil, err
	}
	var tok proto.Token
	if _, err := rand.Read(tok[:]); err != nil {
		free()
		return nil, fmt.Errorf("server cannot make a test token: %w", err)
	}
	e := &entry{data: make(chan session.DataConn, s.DataConns()), peer: peerHost(peer)}
	r.mu.Lock()
	r.tests[tok] = e
	r.mu.Unlock()
	return &session.Admission{
		Token:      tok,
		Data:       e.data,
		Release:    func() { r.release(tok); free() },
		Concurrent: func() int { return r.running() - 1 },
	}, nil
}

func (r *registry) release(tok proto.Token) {
	r.mu.Lock()
	e, ok := r.tests[tok]
	delete(r.tests, tok)
	r.mu.Unlock()
	if !ok {
		return
	}
	// Close what arrived and was never taken.
	for {
		select {
		case dc := <-e.data:
			_ = dc.Conn.Close()
		default:
			return
		}
	}
}

// deliver hands a data connection to its test. It reports false, and the
// caller closes the connection, when no test has that token or the test
// already has all its connections. Only the control connection's host may
// join a test, so a token seen on the wire is no use to a third party.
func (r *registry) deliver(h proto.DataHello, conn *net.TCPConn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tests[h.Token]
	if !ok || e.peer != peerHost(conn.RemoteAddr()) {
		return false
	}
	select {
	case e.data <- session.DataConn{StreamID: h.StreamID, Conn: conn}:
		return true
	default:
		return false
	}
}

func (r *registry) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots
}

// drain refuses new tests from now on.
func (r *registry) drain() {
	r.mu.Lock()
	r.draining = true
	r.mu.Unlock()
}
