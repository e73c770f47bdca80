package session

import (
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// The server's final report travels without its rows, which the client
// has all of: nor does it say how the server joined its own record.
func TestEndReportTravelsWithoutRows(t *testing.T) {
	e := withoutIntervals(result.End{Intervals: []result.Interval{{Index: 0}}, RowsJoined: 4, Role: result.RoleServer})
	if e.Intervals != nil || e.RowsJoined != 0 || e.Role != result.RoleServer {
		t.Fatalf("the end report as it travels: %+v", e)
	}
}
