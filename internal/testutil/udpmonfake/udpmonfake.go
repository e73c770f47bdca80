// Package udpmonfake makes the result of one udpmon point's test as its
// two ends would report it, for the tests of the sweep's model and of its
// runner.
package udpmonfake

import (
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Result is a point's test: n datagrams sent spacing apart, received
// over the same span with lost of them missing, the receiving host
// counting rcvbuf drops.
func Result(s spec.Spec, n int64, spacing time.Duration, lost int64, rcvbuf uint64) *result.Result {
	span := time.Duration(n-1) * spacing
	recv := n - lost
	return &result.Result{
		Spec: s,
		Local: result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true, End: span.Seconds(),
			UDP: &result.UDP{Sent: n, Spacing: &result.Spacing{TargetNs: int64(spacing), MeanNs: float64(spacing), Samples: n}}}},
			UDPCounters: &result.SNMP{}},
		Remote: result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1, End: span.Seconds(),
			UDP: &result.UDP{Received: recv, Lost: lost, Expected: n}}},
			UDPCounters: &result.SNMP{RcvbufErrors: rcvbuf, InErrors: rcvbuf},
			UDPArrivals: []result.UDPArrivals{{StreamID: 1, Received: recv, FirstNs: 1e9, LastNs: 1e9 + int64(time.Duration(recv-1)*spacing)}},
		},
	}
}
