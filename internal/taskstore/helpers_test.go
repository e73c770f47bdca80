package taskstore

import (
	"context"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
)

func backends(t *testing.T) map[string]string { return archivetest.Backends(t) }

// results is the archive as a field of both, named apart from Store.
type results = archive.Store

// both is a database's two stores, as a daemon holds them: the schedule's
// state, and the archive its runs' results land in.
type both struct {
	*Store
	*results
}

func open(t *testing.T, dsn string) both {
	t.Helper()
	a, err := archive.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return both{New(a), a}
}

func f64(v float64) *float64 { return &v }

// sampleRun is a finished run's record with the figures the grid reads.
func sampleRun(id, campaign string, rep int) *archive.Run {
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).Add(time.Duration(rep) * time.Minute)
	return &archive.Run{
		ID: id, Campaign: campaign, Rep: rep, Seq: rep, State: archive.StateFinished, Source: archive.SourceNative,
		ToolVersion: "v9", Cmdline: "wireperf client b", LocalHost: "a", RemoteHost: "b",
		Started: start, Ended: start.Add(10 * time.Second), Document: []byte("{}\n"), DocumentFormat: archive.FormatJSON,
		Summary: archive.Summary{Seconds: f64(10), SentBps: f64(8e8), ReceivedBps: f64(7.99e8), MeanRTTms: f64(0.25)},
	}
}
