package server

import "sync"

// gate counts connections still in their handshake, over all clients and
// per client prefix, and turns new ones away past the limits. Zero means
// no limit.
type gate struct {
	max, maxPer int

	mu    sync.Mutex
	total int
	per   map[string]int
}

func newGate(max, maxPer int) *gate { return &gate{max: max, maxPer: maxPer, per: map[string]int{}} }

// enter takes a place for a connection from client, if there is one.
func (g *gate) enter(client string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if (g.max > 0 && g.total >= g.max) || (g.maxPer > 0 && g.per[client] >= g.maxPer) {
		return false
	}
	g.total++
	g.per[client]++
	return true
}

// leave gives a place back.
func (g *gate) leave(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.per[client]--; g.per[client] <= 0 {
		delete(g.per, client)
	}
}

func (g *gate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}
