package archiveview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/taskstore"
)

func num(v float64) *float64 { return &v }

// --where puts source, state, campaign and host into the filter, and an
// axis into a condition that keeps only the runs with that value.
func TestWhere(t *testing.T) {
	t.Parallel()
	sel, err := Where(archive.Filter{Campaign: "c"}, []string{"source=native", "state=failed", "host=b", "window=1M", "proto=udp"})
	if err != nil {
		t.Fatal(err)
	}
	if f := sel.Filter; f.Source != "native" || f.State != "failed" || f.Host != "b" || f.Campaign != "c" {
		t.Errorf("filter %+v", f)
	}
	match := &archive.Run{ID: "m", Axes: map[string]archive.Axis{"window": {Num: num(1 << 20)}, "proto": {Label: "udp"}}}
	otherWindow := &archive.Run{ID: "w", Axes: map[string]archive.Axis{"window": {Num: num(1 << 21)}, "proto": {Label: "udp"}}}
	noProto := &archive.Run{ID: "p", Axes: map[string]archive.Axis{"window": {Num: num(1 << 20)}}}
	if kept := sel.Keep([]*archive.Run{otherWindow, match, noProto}); len(kept) != 1 || kept[0] != match {
		t.Errorf("kept %v, want only the run with window 1M and proto udp", kept)
	}
	if sel, _ := Where(archive.Filter{}, []string{"campaign=d"}); sel.Filter.Campaign != "d" || len(sel.Keep([]*archive.Run{noProto})) != 1 {
		t.Errorf("campaign=d: %+v", sel)
	}
	for where, want := range map[string]string{"window": "want KEY=VALUE", "=1": "want KEY=VALUE", "colour=red": "an axis", "window=lots": `"window=lots"`} {
		if _, err := Where(archive.Filter{}, []string{where}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--where %q: %v, want %q", where, err, want)
		}
	}
}

// A long campaign name widens its column: every row's source starts under
// the header's SOURCE.
func TestRunsTextColumnsAligned(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	WriteRunsText(&b, []*archive.Run{
		{ID: "0123456789abcdef", Campaign: "lab-windows-streams-long", Source: "native", State: archive.StateFinished},
		{ID: "fedcba9876543210", Source: "iperf2-text", State: archive.StateFinished},
	})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	col := strings.Index(lines[0], "SOURCE")
	for _, l := range lines[1:] {
		if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("source not under SOURCE (column %d):\n%s", col, b.String())
		}
	}
	b.Reset()
	WriteRunsText(&b, nil)
	if b.String() != "no runs\n" {
		t.Errorf("no runs: %q", b.String())
	}
}

// A failed run shows its error instead of a result; axes are sorted.
func TestRunsTextLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	WriteRunsText(&b, []*archive.Run{{ID: "r1", Source: "native", State: archive.StateFailed, Error: "refused",
		Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600)),
		Axes:    map[string]archive.Axis{"parallel": {Num: num(4)}, "direction": {Label: "up"}}}})
	line := strings.Split(b.String(), "\n")[1]
	for _, want := range []string{"2026-03-01 11:00:00", "  -  ", "direction=up parallel=4: refused"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
}

func TestRunsJSON(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	var b bytes.Buffer
	err := WriteRunsJSON(&b, []*archive.Run{
		{ID: "a", Campaign: "g", Source: "native", State: archive.StateFinished, Started: started,
			Axes: map[string]archive.Axis{"window": {Num: num(1 << 20)}, "proto": {Label: "tcp"}}},
		{ID: "b", Source: "iperf2-text", State: archive.StateFinished},
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs []map[string]any
	if err := json.Unmarshal(b.Bytes(), &runs); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(runs) != 2 || runs[0]["campaign"] != "g" || runs[0]["start"] != "2026-03-01T11:00:00Z" || runs[1]["campaign"] != nil {
		t.Errorf("runs %v", runs)
	}
	axes := runs[0]["axes"].(map[string]any)
	if axes["window"] != float64(1<<20) || axes["proto"] != "tcp" {
		t.Errorf("axes %v: want window as a number, proto as a word", axes)
	}
	if _, has := runs[1]["start"]; !has || runs[1]["start"] != nil {
		t.Errorf("a run without a start: %v", runs[1])
	}
	// A figure stored before imports were held to finite numbers can't
	// break the listing: its run shows without it.
	b.Reset()
	inf, rate := math.Inf(1), 1e9
	err = WriteRunsJSON(&b, []*archive.Run{{ID: "c", Source: "iperf2-text", State: archive.StateFinished,
		Axes:    map[string]archive.Axis{"window": {Num: &inf, Label: "huge"}},
		Summary: archive.Summary{ReceivedBps: &inf, SentBps: &rate}}})
	runs = nil
	if err != nil || json.Unmarshal(b.Bytes(), &runs) != nil || len(runs) != 1 {
		t.Fatalf("a run with +Inf: %v\n%s", err, b.String())
	}
	if s := runs[0]["summary"].(map[string]any); s["sent_bits_per_second"] != rate || s["received_bits_per_second"] != nil {
		t.Errorf("summary %v: want the finite figure only", s)
	}
	if a := runs[0]["axes"].(map[string]any); a["window"] != "huge" {
		t.Errorf("axes %v: want the word for a number JSON can't carry", a)
	}
	b.Reset()
	if err := WriteRunsJSON(&b, nil); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("no runs: %q, %v", b.String(), err)
	}
}

// Each kind of stored run shows as it was first printed.
func TestWriteRun(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	// An imported log: the log itself.
	if err := WriteRun(&b, &archive.Run{DocumentFormat: "iperf2-text", Document: []byte("[  3] 0.0-10.0 sec\n")}); err != nil || b.String() != "[  3] 0.0-10.0 sec\n" {
		t.Errorf("imported log: %q, %v", b.String(), err)
	}

	// An advise report: advise's text.
	rep := &advise.Report{Target: "h:5201", Direction: "client → server"}
	doc, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	if err := rep.WriteText(&want); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteRun(&b, &archive.Run{DocumentFormat: archive.FormatAdviseJSON, Document: doc}); err != nil || b.String() != want.String() {
		t.Errorf("advise report:\n%s\nwant:\n%s (%v)", b.String(), want.String(), err)
	}
	if err := WriteRun(&b, &archive.Run{ID: "x", DocumentFormat: archive.FormatAdviseJSON, Document: []byte("{")}); err == nil || !strings.Contains(err.Error(), "run x") {
		t.Errorf("a broken advise document: %v", err)
	}

	// A wireperf test: the client's text report.
	res := &result.Result{Spec: spec.Default(), ServerAddr: "192.0.2.1:5201", ConnectPort: 5201,
		Local:  result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true, Start: 0, End: 1, Bytes: 1e6}}},
		Remote: result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1, Sender: false, Start: 0, End: 1, Bytes: 1e6}}}}
	var jdoc bytes.Buffer
	if err := (&emit.JSON{W: &jdoc}).Write(res); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteRun(&b, &archive.Run{DocumentFormat: archive.FormatJSON, Document: jdoc.Bytes()}); err != nil ||
		!strings.Contains(b.String(), "Connecting to host 192.0.2.1, port 5201") || !strings.Contains(b.String(), "receiver") {
		t.Errorf("a wireperf test:\n%s (%v)", b.String(), err)
	}

	// A run that failed before it had a document: what the archive knows,
	// with the command line's password left out.
	b.Reset()
	err = WriteRun(&b, &archive.Run{ID: "f1", Source: "native", State: archive.StateFailed, Error: "refused", DocumentFormat: archive.FormatJSON,
		Cmdline: "wireperf client h --db postgres://u:secret@db/w", Axes: map[string]archive.Axis{"parallel": {Num: num(2)}}})
	out := b.String()
	if err != nil || !strings.HasPrefix(out, "run f1  native  failed: refused\ncommand: wireperf client h") || strings.Contains(out, "secret") ||
		!strings.Contains(out, "parallel: 2\n") || !strings.Contains(out, "result: ") {
		t.Errorf("a failed run:\n%s (%v)", out, err)
	}
}

func TestWriteTasks(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	err := WriteTasks(&b, []*schedule.Task{
		{ID: "t1", Name: "tput", Source: "ams", Dest: "fra", Args: []string{"client", "-t", "10"}, Class: schedule.Exclusive, Repeat: time.Hour, Slip: time.Minute},
		{ID: "t2", Name: "lat", Source: "fra", Dest: "ams", Args: []string{"rr"}, Class: schedule.Background, Paused: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
		strings.Join(strings.Fields(lines[1]), " ") != "t1 tput ams fra 1h0m0s 1m0s exclusive active client -t 10" ||
		strings.Join(strings.Fields(lines[2]), " ") != "t2 lat fra ams once 0s background paused rr" {
		t.Errorf("tasks:\n%s", b.String())
	}
}

// Each run is marked where it starts in the window, X over o; runs
// outside the window are listed but not marked.
func TestWriteTimeline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	next := 48 * time.Minute // one mark a minute
	runs := []*taskstore.SchedRun{
		{Source: "a", Dest: "b", Test: "tput", Direction: "up", Class: schedule.Exclusive, Planned: now.Add(2 * time.Minute)},
		{Source: "b", Dest: "a", Test: "lat", Class: schedule.Background, Planned: now.Add(2 * time.Minute)},
		{Source: "a", Dest: "c", Test: "lat", Class: schedule.Background, Planned: now.Add(10 * time.Minute)},
		{Source: "a", Dest: "c", Test: "late", Class: schedule.Exclusive, Planned: now.Add(time.Hour)},
	}
	var b strings.Builder
	WriteTimeline(&b, runs, "a", now, next)
	out := b.String()
	bar := "..X.......o" + strings.Repeat(".", 37)
	if !strings.Contains(out, "each mark is 1m0s") || !strings.Contains(out, "\na |"+bar+"| 4 runs\n") || strings.Contains(out, "\nb |") {
		t.Errorf("timeline of a:\n%s", out)
	}
	if !strings.Contains(out, "tput       → b") || !strings.Contains(out, "lat        ← b") {
		t.Errorf("a's runs, each with its peer:\n%s", out)
	}
	b.Reset()
	WriteTimeline(&b, nil, "", now, next)
	if !strings.HasSuffix(b.String(), "no runs planned\n") {
		t.Errorf("no runs: %q", b.String())
	}
}

func TestRecentRunIDs(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var runs []*archive.Run
	for i := range 12 {
		runs = append(runs, &archive.Run{ID: fmt.Sprintf("r%02d", i), Started: start.Add(time.Duration(i) * time.Minute)})
	}
	if got := strings.Join(RecentRunIDs(runs[:2]), " "); got != "r01 r00" {
		t.Errorf("two runs: %q", got)
	}
	if got := strings.Join(RecentRunIDs(runs), " "); got != "r11 r10 r09 r08 r07 r06 r05 r04 r03 r02 and 2 more" {
		t.Errorf("twelve runs: %q", got)
	}
	if runs[0].ID != "r00" {
		t.Error("the caller's runs were reordered")
	}
	if RecentRunIDs(nil) != nil {
		t.Error("no runs named some")
	}
}
