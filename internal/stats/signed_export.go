package stats

import "github.com/wireperf/wireperf/internal/result"

// Signed is a distribution of signed ns values for a figure kept outside
// this package: rr's one-way delays, which are negative when the clock
// offset they are corrected by is off. It is signedDist, the one
// implementation.
type Signed struct{ d signedDist }

// NewSigned is an empty distribution.
func NewSigned() *Signed { return &Signed{d: newSignedDist()} }

// Record adds one value, in ns.
func (s *Signed) Record(v int64) { s.d.record(v) }

// Percentiles summarises the values moved by shift ns, in µs; nil when
// empty.
func (s *Signed) Percentiles(shift int64) *result.Percentiles { return s.d.percentiles(shift) }
