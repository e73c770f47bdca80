package session

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// merger joins the client's own intervals with the server's as they
// arrive and shows each row once, in order: when both ends' figures are
// in, or when the server's are overdue (then its side shows as missing;
// a late report still reaches the final result).
type merger struct {
	res      *result.Result
	roles    map[int]string
	obs      Observer
	grace    time.Duration
	local    []result.Interval
	remote   []result.Interval
	localAt  map[int]time.Time // when each local interval arrived
	byIndexL map[int]int       // index → position in local
	byIndexR map[int]int
	next     int              // the next row to show
	now      func() time.Time // the clock overdue rows are judged by
}

// mergeTick is how often the merger looks for overdue rows while no
// interval arrives.
const mergeTick = 100 * time.Millisecond

func newMerger(res *result.Result, roles map[int]string, obs Observer, grace time.Duration, now func() time.Time) *merger {
	return &merger{
		res: res, roles: roles, obs: obs, grace: grace, now: now,
		localAt: map[int]time.Time{}, byIndexL: map[int]int{}, byIndexR: map[int]int{},
	}
}

// loop consumes both feeds until the local one closes; the remote feed
// is then drained of what has already arrived. Each tick looks again for
// rows whose server figures are overdue.
func (m *merger) loop(local <-chan result.Interval, remote <-chan result.Interval, ticks <-chan time.Time) {
	for {
		select {
		case iv, ok := <-local:
			if !ok {
				m.drain(remote)
				return
			}
			m.byIndexL[iv.Index] = len(m.local)
			m.local = append(m.local, iv)
			m.localAt[iv.Index] = m.now()
		case iv := <-remote:
			m.byIndexR[iv.Index] = len(m.remote)
			m.remote = append(m.remote, iv)
		case <-ticks:
		}
		m.show(false)
	}
}

func (m *merger) drain(remote <-chan result.Interval) {
	for {
		select {
		case iv := <-remote:
			m.byIndexR[iv.Index] = len(m.remote)
			m.remote = append(m.remote, iv)
		default:
			return
		}
	}
}

// show emits every row that is ready. With all set, every row left is
// ready: the test is over.
func (m *merger) show(all bool) {
	for {
		li, haveL := m.byIndexL[m.next]
		ri, haveR := m.byIndexR[m.next]
		if !haveL && !haveR {
			return
		}
		if !all && !(haveL && haveR) {
			if !haveL || m.now().Sub(m.localAt[m.next]) < m.grace {
				return
			}
		}
		var l, r *result.Interval
		if haveL {
			l = &m.local[li]
		}
		if haveR {
			r = &m.remote[ri]
		}
		if m.obs != nil {
			m.obs.Interval(m.res, result.JoinInterval(l, r, m.roles))
		}
		m.next++
	}
}

// flush shows the rows still waiting, once the test is over.
func (m *merger) flush() { m.show(true) }
