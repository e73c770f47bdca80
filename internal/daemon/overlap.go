package daemon

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// Overlaps checks runs as they happened: each pair of exclusive runs that
// share a host and whose actual [start, end) overlap. Acceptance tests
// check the schedule with it, from the archive's record.
func Overlaps(runs []*taskstore.SchedRun) []string {
	var out []string
	for _, p := range OverlapPairs(runs) {
		a, b := p[0], p[1]
		out = append(out, fmt.Sprintf("%s [%s, %s) and %s [%s, %s)", a.ID, a.ActualStart.Format("15:04:05.000"), a.Ended.Format("15:04:05.000"),
			b.ID, b.ActualStart.Format("15:04:05.000"), b.Ended.Format("15:04:05.000")))
	}
	return out
}

// OverlapPairs are Overlaps' pairs as runs, for a test that tells more
// about them (its daemons' logs).
func OverlapPairs(runs []*taskstore.SchedRun) [][2]*taskstore.SchedRun {
	var out [][2]*taskstore.SchedRun
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.Class != schedule.Exclusive || b.Class != schedule.Exclusive || a.ActualStart.IsZero() || b.ActualStart.IsZero() ||
				a.Ended.IsZero() || b.Ended.IsZero() {
				continue
			}
			share := a.Source == b.Source || a.Source == b.Dest || a.Dest == b.Source || a.Dest == b.Dest
			if share && a.ActualStart.Before(b.Ended) && b.ActualStart.Before(a.Ended) {
				out = append(out, [2]*taskstore.SchedRun{a, b})
			}
		}
	}
	return out
}
