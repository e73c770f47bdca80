package daemon

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The API's HTTP bounds. A daemon's API is reachable by every host of a
// mesh (reads are open by default), so no client may hold its memory,
// its descriptors or its time: each phase of a request has a deadline,
// and connections past MaxAPIConns shed the one that matters least.
const (
	MaxAPIConns          = 256
	apiReadHeaderTimeout = 5 * time.Second
	apiReadTimeout       = 30 * time.Second // headers and body
	apiWriteTimeout      = 60 * time.Second // a slow reader of /grid is cut here
	apiIdleTimeout       = 30 * time.Second
	apiHandlerTimeout    = 30 * time.Second // the context of every handler
	apiMaxHeaderBytes    = 64 << 10
)

// connPhase is what a connection is doing, as the HTTP server reports it.
type connPhase int

const (
	phaseNew    connPhase = iota // accepted, no request yet
	phaseIdle                    // between requests (keep-alive)
	phaseActive                  // a request is being read or answered
)

// connInfo is one tracked connection.
type connInfo struct {
	phase connPhase
	since time.Time // when it entered its phase
}

// shedOrder says which of two connections to close first when the API
// is full: one that holds no request (new or idle) before one that does,
// and within each, the one that has waited longest. A client that opens
// connections and says nothing is shed first; one that is being
// answered, last.
func shedFirst(a, b connInfo) bool {
	ab, bb := a.phase == phaseActive, b.phase == phaseActive
	if ab != bb {
		return !ab
	}
	return a.since.Before(b.since)
}

// connTracker caps the API's connections: http.Server calls ConnState,
// and a connection over the cap closes the one shedFirst picks.
type connTracker struct {
	max int
	now func() time.Time

	mu       sync.Mutex
	conns    map[net.Conn]connInfo
	accepted int // connections seen, ever
	shed     int // closed by the cap
	peak     int // most open at once, after shedding
}

func newConnTracker(max int, now func() time.Time) *connTracker {
	return &connTracker{max: max, now: now, conns: map[net.Conn]connInfo{}}
}

// ConnState is http.Server's hook.
func (t *connTracker) ConnState(c net.Conn, s http.ConnState) {
	var victim net.Conn
	t.mu.Lock()
	switch s {
	case http.StateNew:
		t.conns[c] = connInfo{phaseNew, t.now()}
		t.accepted++
		if len(t.conns) > t.max {
			victim = t.pick(c)
			delete(t.conns, victim)
			t.shed++
		}
		t.peak = max(t.peak, len(t.conns))
	case http.StateIdle:
		t.conns[c] = connInfo{phaseIdle, t.now()}
	case http.StateActive:
		if _, ok := t.conns[c]; ok { // a shed one is not tracked again
			t.conns[c] = connInfo{phaseActive, t.now()}
		}
	case http.StateHijacked, http.StateClosed:
		delete(t.conns, c)
	}
	t.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
}

// pick is the connection to shed, never the one just accepted.
func (t *connTracker) pick(newest net.Conn) net.Conn {
	var best net.Conn
	var bi connInfo
	for c, ci := range t.conns {
		if c == newest {
			continue
		}
		if best == nil || shedFirst(ci, bi) {
			best, bi = c, ci
		}
	}
	return best
}

// connCounts is what the tracker has seen.
type connCounts struct {
	Open, Accepted, Shed, Peak int
}

// counts is the connections open now, accepted and shed so far, and the
// most ever open at once. Accepted − Open − Shed closed by themselves or
// by their deadlines.
func (t *connTracker) counts() connCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return connCounts{Open: len(t.conns), Accepted: t.accepted, Shed: t.shed, Peak: t.peak}
}
