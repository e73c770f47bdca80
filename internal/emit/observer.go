package emit

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
)

// Observer shows a running test through an emitter: its header when it
// starts and each interval as it is cut. Err is the first error writing
// them; the test goes on regardless.
type Observer struct {
	Emitter Emitter
	Host    string
	Port    int
	Err     error
}

// Started writes the header.
func (o *Observer) Started(r *result.Result) {
	o.keep(o.Emitter.Header(HeaderOf(r, o.Host, o.Port)))
}

// Interval writes one interval row.
func (o *Observer) Interval(r *result.Result, row result.IntervalRow) {
	o.keep(o.Emitter.Interval(r, row))
}

func (o *Observer) keep(err error) {
	if err != nil && o.Err == nil {
		o.Err = fmt.Errorf("writing the report: %w", err)
	}
}

// HeaderOf describes a test that is about to start against host:port.
func HeaderOf(r *result.Result, host string, port int) Header {
	h := HeaderFromResult(r)
	h.ServerAddr = fmt.Sprintf("%s port %d", strings.Trim(host, "[]"), port)
	return h
}
