package flowrun

import (
	"time"
)

// quietWatch tells how long a receiver's byte count has not moved: the
// end of a drain whose peer never closes its streams (an iperf3 client
// keeps them open until the results are shown).
type quietWatch struct {
	bytes int64
	since time.Time
	seen  bool
}

// observe records the count at now and returns how long it has held.
func (q *quietWatch) observe(now time.Time, bytes int64) time.Duration {
	if !q.seen || bytes != q.bytes {
		q.bytes, q.since, q.seen = bytes, now, true
		return 0
	}
	return now.Sub(q.since)
}

// drainDone says whether every receiver has finished or held its count
// for quiet, given each one's watch; the flows that are still reading
// are the only ones observed.
func drainDone(now time.Time, flows []Flow, watches map[int]*quietWatch, quiet time.Duration) bool {
	all := true
	for _, f := range flows {
		if f.Sender() {
			continue
		}
		select {
		case <-f.Done():
			continue
		default:
		}
		w := watches[f.ID()]
		if w == nil {
			w = &quietWatch{}
			watches[f.ID()] = w
		}
		if w.observe(now, f.Bytes()) < quiet {
			all = false
		}
	}
	return all
}

// DrainReceiversUntilQuiet lets the local receivers read what is in
// flight until each has received nothing for quiet, or limit has passed,
// then stops them. It is for peers that stop sending without closing
// their streams: TCP delivers what was sent before the peer said it
// stopped, in one continuous arrival unless a segment is lost, so a
// pause longer than a retransmission timeout and two round trips ends
// what can still arrive.
func (r *Runner) DrainReceiversUntilQuiet(quiet, limit time.Duration) {
	r.mu.Lock()
	if r.drainFrom == 0 && r.has(false) {
		r.drainFrom = max(time.Since(r.epoch), 1)
	}
	r.mu.Unlock()
	watches := map[int]*quietWatch{}
	deadline := time.Now().Add(limit)
	poll := min(max(quiet/8, time.Millisecond), 20*time.Millisecond)
	for now := time.Now(); now.Before(deadline) && !drainDone(now, r.flows, watches, quiet); now = time.Now() {
		time.Sleep(poll) // bounded poll: the kernel's receive counters, until quiet or the deadline
	}
	now := time.Now()
	for _, f := range r.flows {
		if !f.Sender() {
			f.Stop(now)
		}
	}
}
