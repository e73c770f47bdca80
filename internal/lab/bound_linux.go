package lab

import "time"

// RTTBound is the most RTT the watched lab's path gives a packet: both
// directions' impair.Config.MaxDelay, plus the worst lateness its router
// has counted (since it started: at least the test's own). An RTT above
// it was not the path's. 0 when not known.
func (w *RouterWatch) RTTBound() time.Duration {
	if w == nil {
		return 0
	}
	p, err := load(w.name)
	if err != nil {
		return 0
	}
	l, err := LatenessOf(w.name)
	if err != nil {
		return 0
	}
	mtu := p.Router.MTU
	if mtu <= 0 {
		mtu = 1500
	}
	return p.Router.AtoB.MaxDelay(mtu) + p.Router.BtoA.MaxDelay(mtu) + time.Duration(l.MaxUs)*time.Microsecond
}
