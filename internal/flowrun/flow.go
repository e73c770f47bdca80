package flowrun

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// Flow is one data stream of a test on one end, TCP or UDP. The runner
// drives flows without knowing their protocol.
type Flow interface {
	ID() int
	Sender() bool
	Start(b Begin)
	// Stop ends a sender now and lets a receiver read what is in flight
	// until deadline.
	Stop(deadline time.Time)
	Abort()
	Done() <-chan struct{}
	Bytes() int64
	LastByte() time.Duration
	Err() error
	Addrs() (local, remote string)
	Close() error
	// Sample adds the protocol's figures to an interval, and reports the
	// counters it wants remembered for the next one. counted is false in
	// the omitted start.
	Sample(si *result.StreamInterval, counted bool)
	// MarkOmitEnd remembers where the counted span begins.
	MarkOmitEnd()
	// Total adds the protocol's figures over the counted span.
	Total(rs *result.Stream)
}

// Begin is what the runner gives every flow of a test as it starts.
type Begin struct {
	Epoch time.Time // the test's time zero, the same for every flow
	// Budget is the end's -n limit, shared by its sending streams.
	Budget *Budget
	// TimelineSamples is the most TCP_INFO timeline samples this flow may
	// report: its share of what one end's final report has room for.
	TimelineSamples int
}

// flowsDone is closed when every matching flow has finished.
func flowsDone(flows []Flow, match func(Flow) bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for _, f := range flows {
			if match(f) {
				<-f.Done()
			}
		}
		close(ch)
	}()
	return ch
}
