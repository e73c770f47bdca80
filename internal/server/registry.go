package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/spec"
)

// registry admits tests under the limits and routes data connections to
// them by token.
type registry struct {
	limits Limits
	caps   *caps
	// keyed says every native client proved a key (the server has keys):
	// only iperf3 clients are held to Limits.MinKeylessInterval then.
	keyed bool

	mu       sync.Mutex
	tests    map[proto.Token]*entry
	slots    int // tests running, native and iperf3
	perPeer  map[string]int
	memory   int64 // data buffers and kept rows of the running tests
	streams  int   // data connections of the running tests
	draining bool
}

type entry struct {
	data chan control.DataConn
	peer string
}

// refusal is a test the limits turned away; its text goes to the client.
// cause, when set, is the error it says (iperf3.ErrTotalRate for the byte
// caps, which an iperf3 client hears as its own code).
type refusal struct {
	reason string
	cause  error
}

func (r refusal) Error() string { return r.reason }
func (r refusal) Unwrap() error { return r.cause }

func refusef(format string, args ...any) error { return refusal{reason: fmt.Sprintf(format, args...)} }

func newRegistry(l Limits, keyed bool, now func() time.Time) *registry {
	return &registry{limits: l, caps: newCaps(l, now), keyed: keyed, tests: map[proto.Token]*entry{}, perPeer: map[string]int{}}
}

// peerHost is an address's host: only the control connection's host may
// open a test's data connections.
func peerHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, _ := net.SplitHostPort(a.String())
	return host
}

// reserve takes a slot for a test from peer under the limits; release
// gives it back. iperf3 tests take slots this way, without a token.
// keyed says the client proved a key. meter is the test's account under
// the byte caps, nil when the server has none.
func (r *registry) reserve(peer net.Addr, s spec.Spec, keyed bool) (release func(), meter *testMeter, err error) {
	if err := r.limits.checkFrom(s, keyed); err != nil {
		var ref refusal
		if errors.As(err, &ref) {
			return nil, nil, ref
		}
		return nil, nil, refusal{reason: err.Error()}
	}
	client := r.limits.clientOf(peer)
	buffers, rows := r.limits.testMemory(s)
	mem, streams := buffers+rows, s.DataConns()
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.limits
	switch {
	case r.draining:
		return nil, nil, refusef("server is shutting down")
	case l.MaxTests > 0 && r.slots >= l.MaxTests:
		return nil, nil, refusef("server is busy: %s running, its limit is %d (--max-tests); try again later", plural(r.slots, "test", "tests"), l.MaxTests)
	case l.MaxTestsPerClient > 0 && r.perPeer[client] >= l.MaxTestsPerClient:
		return nil, nil, refusef("server is busy: %s already running from %s, its limit is %d (--max-tests-per-client)", plural(r.perPeer[client], "test", "tests"), client, l.MaxTestsPerClient)
	case l.MaxMemory > 0 && r.memory+mem > l.MaxMemory:
		return nil, nil, refusef("server is busy: this test's %d MiB of buffers and rows and the %d MiB of the running tests exceed its limit of %d MiB (--max-memory); try again later, or use a smaller -l, fewer streams or a longer -i",
			mem>>20, r.memory>>20, l.MaxMemory>>20)
	case l.MaxTotalStreams > 0 && r.streams+streams > l.MaxTotalStreams:
		return nil, nil, refusef("server is busy: this test's %s and the %d of the running tests exceed its limit of %d (--max-total-streams); try again later",
			plural(streams, "data connection", "data connections"), r.streams, l.MaxTotalStreams)
	}
	meter, err = r.caps.admit(client, s)
	if err != nil {
		return nil, nil, refusal{err.Error(), err}
	}
	r.slots++
	r.perPeer[client]++
	r.memory += mem
	r.streams += streams
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.slots--
			r.memory -= mem
			r.streams -= streams
			if r.perPeer[client]--; r.perPeer[client] <= 0 {
				delete(r.perPeer, client)
			}
			r.mu.Unlock()
			meter.Close()
		})
	}, meter, nil
}

// Admit implements session.Registrar: a slot and a token.
func (r *registry) Admit(peer net.Addr, s spec.Spec) (*control.Admission, error) {
	free, meter, err := r.reserve(peer, s, r.keyed)
	if err != nil {
		return nil, err
	}
	var tok proto.Token
	if _, err := rand.Read(tok[:]); err != nil {
		free()
		return nil, fmt.Errorf("server cannot make a test token: %w", err)
	}
	e := &entry{data: make(chan control.DataConn, s.DataConns()), peer: peerHost(peer)}
	r.mu.Lock()
	r.tests[tok] = e
	r.mu.Unlock()
	return &control.Admission{
		Token:      tok,
		Data:       e.data,
		Release:    func() { r.release(tok); free() },
		Concurrent: func() int { return r.running() - 1 },
		Meter:      meterFunc(meter),
		MeterEvery: r.caps.every(),
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
	case e.data <- control.DataConn{StreamID: h.StreamID, Conn: conn}:
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
