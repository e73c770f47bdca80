package server

import (
	"net"
	"sync"
	"time"
)

// gate counts connections still in their handshake, over all clients and
// per client prefix, and turns new ones away past the limits. Zero means
// no limit.
//
// When every place is taken, a new connection takes the place of a
// silent one (accepted, nothing read from it yet) of the client that
// holds the most places, the one that has waited longest: so no prefix
// can hold every place with connections that say nothing, and a client
// that speaks at once is never the one shed.
type gate struct {
	max, maxPer int

	mu    sync.Mutex
	total int
	per   map[string][]*slot
}

// slot is one connection's place.
type slot struct {
	client string
	conn   net.Conn
	since  time.Time
	silent bool // nothing read from it yet
	gone   bool // its place was given back
}

func newGate(max, maxPer int) *gate {
	return &gate{max: max, maxPer: maxPer, per: map[string][]*slot{}}
}

// enter takes a place for a connection from client, if there is one,
// shedding a silent connection of the largest holder when the gate is
// full. shed is that connection, to be closed by the caller.
func (g *gate) enter(client string, conn net.Conn, now time.Time) (sl *slot, shed net.Conn, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxPer > 0 && len(g.per[client]) >= g.maxPer {
		return nil, nil, false
	}
	if g.max > 0 && g.total >= g.max {
		v := g.victim(client)
		if v == nil {
			return nil, nil, false
		}
		g.release(v)
		shed = v.conn
	}
	sl = &slot{client: client, conn: conn, since: now, silent: true}
	g.total++
	g.per[client] = append(g.per[client], sl)
	return sl, shed, true
}

// victim is the silent slot to shed for a newcomer from client: the
// oldest silent one of the client holding the most places, if that
// client holds more than the newcomer's would after it enters.
func (g *gate) victim(client string) *slot {
	var v *slot
	most := len(g.per[client]) + 1
	for c, slots := range g.per {
		if c == client || len(slots) <= most {
			continue
		}
		for _, s := range slots {
			if s.silent {
				if v == nil || len(slots) > len(g.per[v.client]) || (len(slots) == len(g.per[v.client]) && s.since.Before(v.since)) {
					v = s
				}
				break // slots are in the order they entered: the first silent one is the oldest
			}
		}
	}
	return v
}

// spoke marks a connection that has sent its first bytes: it is no
// longer shed for newcomers.
func (g *gate) spoke(sl *slot) {
	g.mu.Lock()
	sl.silent = false
	g.mu.Unlock()
}

// leave gives a place back; a place already given back (shed) is not
// given twice.
func (g *gate) leave(sl *slot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.release(sl)
}

func (g *gate) release(sl *slot) {
	if sl.gone {
		return
	}
	sl.gone = true
	g.total--
	slots := g.per[sl.client]
	for i, s := range slots {
		if s == sl {
			slots = append(slots[:i], slots[i+1:]...)
			break
		}
	}
	if len(slots) == 0 {
		delete(g.per, sl.client)
	} else {
		g.per[sl.client] = slots
	}
}

func (g *gate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}
