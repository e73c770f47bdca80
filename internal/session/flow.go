package session

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// flow is one data stream of a test on one end, TCP or UDP. The runner
// drives flows without knowing their protocol.
type flow interface {
	id() int
	sender() bool
	start(epoch time.Time, budget *tcpflow.Budget)
	// stop ends a sender now and lets a receiver read what is in flight
	// until deadline.
	stop(deadline time.Time)
	abort()
	done() <-chan struct{}
	bytes() int64
	lastByte() time.Duration
	err() error
	addrs() (local, remote string)
	close() error
	// sample adds the protocol's figures to an interval, and reports the
	// counters it wants remembered for the next one. counted is false in
	// the omitted start.
	sample(si *result.StreamInterval, counted bool)
	// markOmitEnd remembers where the counted span begins.
	markOmitEnd()
	// total adds the protocol's figures over the counted span.
	total(rs *result.Stream)
}

// flowsDone is closed when every matching flow has finished.
func flowsDone(flows []flow, match func(flow) bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for _, f := range flows {
			if match(f) {
				<-f.done()
			}
		}
		close(ch)
	}()
	return ch
}
