package emit

import (
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// Options for emitters.
type Options struct {
	Format units.Format // -f: unit of rates (and of transfers where it names one)
	Title  string       // -T: prefix for text lines; overrides Spec.Title when set
	// Verbose adds the test parameters to the text header and the TCP
	// figures of each flow to the text summary.
	Verbose bool
}

// Emitter is what the CLI drives during a test: Header once at the start,
// Interval for each reporting interval as soon as it is known, Summary
// once at the end. Text, JSON and JSONStream all satisfy it.
type Emitter interface {
	Header(h Header) error
	Interval(r *result.Result, row result.IntervalRow) error
	Summary(r *result.Result) error
}

var (
	_ Emitter = (*Text)(nil)
	_ Emitter = (*JSON)(nil)
	_ Emitter = (*JSONStream)(nil)
	_ Emitter = (*Iperf2CSV)(nil)
	_ Emitter = (*Iperf2Enhanced)(nil)
)

// Replay drives e with a finished result, as if the test ran again: a way
// to render an archived Result in any format.
func Replay(e Emitter, r *result.Result) error {
	if err := e.Header(HeaderFromResult(r)); err != nil {
		return err
	}
	for _, row := range r.IntervalRows() {
		if err := e.Interval(r, row); err != nil {
			return err
		}
	}
	return e.Summary(r)
}
