package guide

import (
	"context"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive/runrecord"
)

// Save stores an advise report (--save) in the archive db names, with
// campaign's runs when it is set: runrecord.Advise makes the record from
// the report and its JSON document doc. It returns the run's ID.
func Save(ctx context.Context, db, campaign string, rep *advise.Report, doc []byte, cmdline []string) (string, error) {
	rec := runrecord.Advise(rep, doc, campaign, cmdline, time.Now())
	return rec.ID, runrecord.Store(ctx, db, rec)
}
