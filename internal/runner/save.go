package runner

import (
	"context"
	"time"

	"github.com/wireperf/wireperf/internal/archive/runrecord"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// SaveClient stores a client test that no campaign ran (--save of client
// and selftest) in the archive db names: runrecord.Test makes the record,
// runrecord.Store stores it. res may be nil (the test did not start);
// runErr is the test's error, stored with a failed run. It returns the
// run's ID.
func SaveClient(ctx context.Context, db string, res *result.Result, runErr error, cmdline []string) (string, error) {
	rec, err := runrecord.Test(res, runErr, cmdline, time.Now())
	if err != nil {
		return "", err
	}
	return rec.ID, runrecord.Store(ctx, db, rec)
}

// SaveUDPMon stores a udpmon sweep (--save) in the archive db names, with
// campaign's runs when it is set: runrecord.UDPMon makes the record.
// runErr is the sweep's error, stored with a failed run. It returns the
// run's ID.
func SaveUDPMon(ctx context.Context, db, campaign string, sw *udpmon.Sweep, runErr error, cmdline []string) (string, error) {
	rec, err := runrecord.UDPMon(sw, campaign, runErr, cmdline, time.Now())
	if err != nil {
		return "", err
	}
	return rec.ID, runrecord.Store(ctx, db, rec)
}
