package session

import (
	"fmt"
	"net"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// newTCPStream wraps a data connection, with what the spec asks of its
// data: sendfile for a sender (-Z), stamps (--trip-times), the repeating
// payload and the receivers' MSG_TRUNC reads (--skip-rx-copy).
func newTCPStream(id int, sender bool, c *net.TCPConn, s spec.Spec) (*tcpflow.Stream, error) {
	st := tcpflow.NewStream(id, sender, c)
	if sender && s.ZeroCopy {
		if err := st.UseZeroCopy(s.Length); err != nil {
			return nil, fmt.Errorf("-Z: %w", err)
		}
	}
	if s.TripTimes {
		st.UseTripTimes(s.Length)
	}
	if s.RepeatingPayload {
		st.UseRepeatingPayload()
	}
	if s.SkipRxCopy {
		st.UseSkipRxCopy()
	}
	return st, nil
}

// withoutIntervals is an end's final report as it travels: the intervals
// went live already, and a long test has too many to resend. The peer
// has every row, so how the sender joined its own record of them
// (RowsJoined) does not travel either.
func withoutIntervals(e result.End) result.End {
	e.Intervals, e.RowsJoined = nil, 0
	return e
}
