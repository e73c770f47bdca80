package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/udpmon"
	"github.com/wireperf/wireperf/internal/version"
)

// saveRun stores one test outside any campaign (a client's --save): its
// -J document, its summary and its provenance. runErr is the test's
// error, stored with a failed run.
func saveRun(ctx context.Context, db string, res *result.Result, runErr error, cmdline []string) (string, error) {
	var doc bytes.Buffer
	if res != nil {
		if err := (&emit.JSON{W: &doc}).Write(res); err != nil {
			return "", err
		}
	}
	rec := &archive.Run{Source: archive.SourceNative, State: archive.StateFinished, ToolVersion: version.String(),
		Cmdline: strings.Join(cmdline, " "), Started: time.Now(), Axes: map[string]archive.Axis{}}
	if doc.Len() > 0 {
		rec.Document, rec.DocumentFormat = doc.Bytes(), archive.FormatJSON
		if p, err := archive.ParseDocument(doc.Bytes()); err == nil {
			rec.Summary, rec.Intervals, rec.Hosts, rec.Limits, rec.Axes = p.Summary, p.Intervals, p.Hosts, p.Limits, p.Axes
			rec.LocalHost, rec.RemoteHost, rec.LocalKernel, rec.RemoteKernel = p.LocalHost, p.RemoteHost, p.LocalKernel, p.RemoteKernel
			rec.Started, rec.Ended = p.Started, p.Ended
		}
	}
	if res != nil && !res.StartedAt.IsZero() {
		rec.Started = res.StartedAt
	}
	if runErr != nil {
		rec.State, rec.Error = archive.StateFailed, oneLine(runErr)
	}
	// A single run's ID: its start and command line.
	sum := sha256.Sum256([]byte(rec.Started.UTC().Format(time.RFC3339Nano) + "\x00" + rec.Cmdline))
	rec.ID = "s" + hex.EncodeToString(sum[:8])
	return rec.ID, storeRun(ctx, db, rec)
}

// storeRun stores one run with a context of its own, so that a test cut
// short by Ctrl-C, or a selftest that has stopped its server, is still
// recorded.
func storeRun(ctx context.Context, db string, rec *archive.Run) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	store, err := openArchive(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()
	return store.PutRun(ctx, rec)
}

// checkArchiveFor opens the archive that --save stores into, and checks
// the campaign named to hold the run, before any test runs.
func checkArchiveFor(ctx context.Context, db, campaign string) error {
	store, err := openArchive(ctx, db)
	if err != nil {
		return err
	}
	defer store.Close()
	if campaign == "" {
		return nil
	}
	return requireCampaign(ctx, store, campaign)
}

// saveAdvise stores an advise report as a run of its own: its -J
// document (verdict, evidence, advice and the tests' full results) under
// archive.FormatAdviseJSON, with the campaign when one is named.
func saveAdvise(ctx context.Context, db, campaign string, rep *advise.Report, doc []byte, cmdline []string) (string, error) {
	rec := &archive.Run{Campaign: campaign, Source: archive.SourceAdvise, State: archive.StateFinished,
		ToolVersion: version.String(), Cmdline: strings.Join(cmdline, " "), Started: rep.StartedAt, Ended: time.Now(),
		Document: doc, DocumentFormat: archive.FormatAdviseJSON, Axes: map[string]archive.Axis{}, RemoteHost: rep.Target}
	// The hosts as the tests saw them: this client and the server.
	if len(rep.Results) > 0 && rep.Results[0] != nil {
		r := rep.Results[0]
		rec.LocalHost, rec.LocalKernel = r.Local.Host.Hostname, r.Local.Host.System
		if r.Remote.Host.Hostname != "" {
			rec.RemoteHost, rec.RemoteKernel = r.Remote.Host.Hostname, r.Remote.Host.System
		}
	}
	if rec.Started.IsZero() {
		rec.Started = rec.Ended
	}
	sum := sha256.Sum256([]byte(rec.Started.UTC().Format(time.RFC3339Nano) + "\x00" + rec.Cmdline + "\x00" + campaign))
	rec.ID = "a" + hex.EncodeToString(sum[:8])
	return rec.ID, storeRun(ctx, db, rec)
}

// saveUDPMon stores a udpmon sweep as one run: its -J document, with the
// campaign when one is named. `wireperf plot udpmon --run ID` draws it.
func saveUDPMon(ctx context.Context, db, campaign string, sw *udpmon.Sweep, runErr error, cmdline []string) (string, error) {
	var doc bytes.Buffer
	if err := (&emit.UDPMonJSON{W: &doc}).Write(sw); err != nil {
		return "", err
	}
	rec := &archive.Run{Campaign: campaign, Source: archive.SourceNative, State: archive.StateFinished,
		ToolVersion: version.String(), Cmdline: strings.Join(cmdline, " "), Started: sw.StartedAt, Ended: time.Now(),
		Document: doc.Bytes(), DocumentFormat: archive.FormatJSON, Axes: map[string]archive.Axis{}, RemoteHost: sw.Server}
	if rec.Started.IsZero() {
		rec.Started = rec.Ended
	}
	if runErr != nil {
		rec.State, rec.Error = archive.StateFailed, oneLine(runErr)
	}
	sum := sha256.Sum256([]byte(rec.Started.UTC().Format(time.RFC3339Nano) + "\x00" + rec.Cmdline + "\x00" + campaign))
	rec.ID = "u" + hex.EncodeToString(sum[:8])
	return rec.ID, storeRun(ctx, db, rec)
}
