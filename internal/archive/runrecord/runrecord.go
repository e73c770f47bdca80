// Package runrecord makes the archive's record of a run that no campaign
// ran (--save): a client's test, a udpmon sweep or an advise report, with
// its -J document, its summary where it has one, and its provenance.
// The archive itself reads documents but never renders them, so this is
// the package that imports both the emitters and the archive.
package runrecord

import (
	"bytes"
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

// Test is the record of one test (a client's or a selftest's --save):
// res's -J document and what the archive reads from it. runErr, when
// set, is the test's error and makes the run a failed one; res may then
// be nil. now is when the record is made, its start when nothing says
// another.
func Test(res *result.Result, runErr error, cmdline []string, now time.Time) (*archive.Run, error) {
	var doc bytes.Buffer
	if res != nil {
		if err := (&emit.JSON{W: &doc}).Write(res); err != nil {
			return nil, err
		}
	}
	rec := &archive.Run{Source: archive.SourceNative, State: archive.StateFinished, ToolVersion: version.String(),
		Cmdline: strings.Join(cmdline, " "), Started: now, Axes: map[string]archive.Axis{}}
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
		rec.State, rec.Error = archive.StateFailed, archive.ErrorLine(runErr)
	}
	// A single run's ID: its start and command line.
	rec.ID = id("s", rec.Started, rec.Cmdline)
	return rec, nil
}

// UDPMon is the record of a udpmon sweep: its -J document, with the
// campaign when one is named. runErr, when set, makes it a failed run.
func UDPMon(sw *udpmon.Sweep, campaign string, runErr error, cmdline []string, now time.Time) (*archive.Run, error) {
	var doc bytes.Buffer
	if err := (&emit.UDPMonJSON{W: &doc}).Write(sw); err != nil {
		return nil, err
	}
	rec := &archive.Run{Campaign: campaign, Source: archive.SourceNative, State: archive.StateFinished,
		ToolVersion: version.String(), Cmdline: strings.Join(cmdline, " "), Started: sw.StartedAt, Ended: now,
		Document: doc.Bytes(), DocumentFormat: archive.FormatJSON, Axes: map[string]archive.Axis{}, RemoteHost: sw.Server}
	if rec.Started.IsZero() {
		rec.Started = rec.Ended
	}
	// The achieved gap between datagrams, as a campaign's udpmon run
	// keeps it.
	if p, err := archive.ParseDocument(rec.Document); err == nil {
		rec.Summary.Figures = p.Summary.Figures
	}
	if runErr != nil {
		rec.State, rec.Error = archive.StateFailed, archive.ErrorLine(runErr)
	}
	rec.ID = id("u", rec.Started, rec.Cmdline, campaign)
	return rec, nil
}

// Advise is the record of an advise report: doc is its -J document
// (verdict, evidence, advice and the tests' full results), stored under
// archive.FormatAdviseJSON, with the campaign when one is named.
func Advise(rep *advise.Report, doc []byte, campaign string, cmdline []string, now time.Time) *archive.Run {
	rec := &archive.Run{Campaign: campaign, Source: archive.SourceAdvise, State: archive.StateFinished,
		ToolVersion: version.String(), Cmdline: strings.Join(cmdline, " "), Started: rep.StartedAt, Ended: now,
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
	rec.ID = id("a", rec.Started, rec.Cmdline, campaign)
	return rec
}

// id is a run's ID: its kind's letter and a hash of its start and of what
// else tells it apart, each part after the first behind a NUL.
func id(kind string, started time.Time, parts ...string) string {
	sum := sha256.Sum256([]byte(started.UTC().Format(time.RFC3339Nano) + "\x00" + strings.Join(parts, "\x00")))
	return kind + hex.EncodeToString(sum[:8])
}

// RRUL is the record of an RRUL run (wireperf rrul --save): its -J
// document and what the archive reads from it. runErr, when set, makes
// it a failed run.
func RRUL(r *result.RRUL, runErr error, cmdline []string, now time.Time) (*archive.Run, error) {
	var doc bytes.Buffer
	if err := (&emit.RRULJSON{W: &doc}).Write(r); err != nil {
		return nil, err
	}
	rec := &archive.Run{Source: archive.SourceNative, State: archive.StateFinished, ToolVersion: version.String(),
		Cmdline: strings.Join(cmdline, " "), Started: r.StartedAt, Ended: now, Document: doc.Bytes(),
		DocumentFormat: archive.FormatJSON, Axes: map[string]archive.Axis{}, RemoteHost: r.Host}
	if p, err := archive.ParseDocument(rec.Document); err == nil {
		rec.Summary, rec.Axes = p.Summary, p.Axes
	}
	if rec.Started.IsZero() {
		rec.Started = now
	}
	if runErr != nil {
		rec.State, rec.Error = archive.StateFailed, archive.ErrorLine(runErr)
	}
	rec.ID = id("r", rec.Started, rec.Cmdline)
	return rec, nil
}
