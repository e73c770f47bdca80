package runrecord

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// A finished test keeps its -J document and the summary the archive
// reads from it, and starts when the result says; a failed one without a
// result keeps its error on one line. Each run's ID comes from its start
// and command line.
func TestTest(t *testing.T) {
	t.Parallel()
	started := now.Add(-time.Minute)
	res := &result.Result{Spec: spec.Default(), StartedAt: started,
		Local: result.End{Role: result.RoleClient, CPU: result.CPU{TotalPercent: 5, PeakRSSBytes: 30 << 20},
			Streams: []result.Stream{{ID: 1, Sender: true, Start: 0, End: 1, Bytes: 1e6}}},
		Remote: result.End{Role: result.RoleServer, CPU: result.CPU{TotalPercent: 7, PeakRSSBytes: 50 << 20},
			Streams: []result.Stream{{ID: 1, Sender: false, Start: 0, End: 1, Bytes: 1e6}}}}
	cmdline := []string{"wireperf", "client", "h", "--save"}
	rec, err := Test(res, nil, cmdline, now)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != archive.StateFinished || rec.Source != archive.SourceNative || rec.DocumentFormat != archive.FormatJSON ||
		!bytes.Contains(rec.Document, []byte(`"wireperf"`)) || rec.Summary.Values()["received_bits_per_second"] != 8e6 {
		t.Errorf("finished run: %+v", rec)
	}
	// Both ends' peak memory, as their end reports said.
	if f := rec.Summary.Figures; f[archive.FigureRSSLocalPeak] != 30<<20 || f[archive.FigureRSSRemotePeak] != 50<<20 {
		t.Errorf("peak RSS: local %v, remote %v; want 30 MiB and 50 MiB", f[archive.FigureRSSLocalPeak], f[archive.FigureRSSRemotePeak])
	}
	if !rec.Started.Equal(started) || rec.Cmdline != "wireperf client h --save" || !strings.HasPrefix(rec.ID, "s") || len(rec.ID) != 17 {
		t.Errorf("provenance: started %v, cmdline %q, id %q", rec.Started, rec.Cmdline, rec.ID)
	}
	// A selftest ran both ends in this process: its peak is neither end's.
	one := *res
	one.Local.OneProcess, one.Remote.OneProcess = true, true
	if self, err := Test(&one, nil, cmdline, now); err != nil || self.Summary.Figures[archive.FigureRSSLocalPeak] != 0 || self.Summary.Figures[archive.FigureRSSRemotePeak] != 0 {
		t.Errorf("selftest peak RSS %v, %v; want none", self.Summary.Figures, err)
	}
	again, _ := Test(res, nil, cmdline, now.Add(time.Hour))
	other, _ := Test(res, nil, append(cmdline, "-t", "5"), now)
	if again.ID != rec.ID || other.ID == rec.ID {
		t.Errorf("IDs %s, %s (same run), %s (another command line)", rec.ID, again.ID, other.ID)
	}

	failed, err := Test(nil, errors.New("connection refused\nby the server"), []string{"wireperf", "client", "x"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if failed.State != archive.StateFailed || failed.Error != "connection refused; by the server" || failed.Document != nil || !failed.Started.Equal(now) {
		t.Errorf("failed run: %+v", failed)
	}
}

func TestUDPMon(t *testing.T) {
	t.Parallel()
	sw := &udpmon.Sweep{Server: "h:5201", StartedAt: now.Add(-time.Minute), Count: 10,
		Points: []udpmon.Point{{Sent: 10, AchievedSpacingNs: 25000, AchievedSpacingP99Ns: 40000}}}
	rec, err := UDPMon(sw, "grid", nil, []string{"wireperf", "udpmon", "h"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if f := rec.Summary.Figures; f[archive.FigureSpacingAchieved] != 25 || f[archive.FigureSpacingAchievedP99] != 40 {
		t.Errorf("achieved gap %v, want 25 and 40 µs", f)
	}
	if rec.Campaign != "grid" || rec.RemoteHost != "h:5201" || !rec.Ended.Equal(now) || !rec.Started.Equal(sw.StartedAt) ||
		!strings.HasPrefix(rec.ID, "u") || !bytes.Contains(rec.Document, []byte(`"udpmon"`)) || rec.State != archive.StateFinished {
		t.Errorf("udpmon run: %+v", rec)
	}
	// The campaign is part of the ID: the same sweep stored in two
	// campaigns is two runs.
	if other, _ := UDPMon(sw, "other", nil, []string{"wireperf", "udpmon", "h"}, now); other.ID == rec.ID {
		t.Error("one ID in two campaigns")
	}
	failed, _ := UDPMon(&udpmon.Sweep{}, "", errors.New("every point failed"), nil, now)
	if failed.State != archive.StateFailed || !failed.Started.Equal(now) {
		t.Errorf("failed sweep: %+v", failed)
	}
}

func TestAdvise(t *testing.T) {
	t.Parallel()
	rep := &advise.Report{Target: "h:5201", Results: []*result.Result{{
		Local:  result.End{Host: result.Host{Hostname: "client", System: "Linux 6.1"}},
		Remote: result.End{Host: result.Host{Hostname: "server", System: "Linux 6.8"}},
	}}}
	doc := []byte(`{"target":"h:5201"}`)
	rec := Advise(rep, doc, "g", []string{"wireperf", "advise", "h"}, now)
	if !rec.IsAdvise() || rec.Source != archive.SourceAdvise || !bytes.Equal(rec.Document, doc) || rec.Campaign != "g" {
		t.Errorf("advise run: %+v", rec)
	}
	if rec.LocalHost != "client" || rec.RemoteHost != "server" || rec.RemoteKernel != "Linux 6.8" || !rec.Started.Equal(now) || !strings.HasPrefix(rec.ID, "a") {
		t.Errorf("advise run's hosts and start: %+v", rec)
	}
	// Without the server's name the target stands for it.
	rep.Results[0].Remote.Host = result.Host{}
	if rec := Advise(rep, doc, "", nil, now); rec.RemoteHost != "h:5201" {
		t.Errorf("remote host %q, want the target", rec.RemoteHost)
	}
}

// Store creates the archive it names and stores the run even when the
// caller's context has ended (a test cut short by Ctrl-C).
func TestStoreAfterCancel(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "sub", "wireperf.db")
	rec, err := Test(nil, context.Canceled, []string{"wireperf", "client", "h", "--save"}, now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Store(ctx, db, rec); err != nil {
		t.Fatal(err)
	}
	st, err := archive.OpenExisting(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Get(context.Background(), rec.ID)
	if err != nil || got.State != archive.StateFailed || got.Error != "context canceled" {
		t.Fatalf("stored %+v, %v", got, err)
	}
	if err := Store(context.Background(), "mysql://x/y", rec); !errors.Is(err, archive.ErrUnknownScheme) {
		t.Fatalf("an unknown scheme: %v", err)
	}
}
