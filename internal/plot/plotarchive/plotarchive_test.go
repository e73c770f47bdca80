package plotarchive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/plot"
	"github.com/wireperf/wireperf/internal/udpmon"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// axes are a run's axes as a campaign stores them: numbers with the
// label given, words as labels.
func axes(kv ...any) map[string]archive.Axis {
	m := map[string]archive.Axis{}
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case float64:
			m[kv[i].(string)] = archive.Axis{Num: f64(v), Label: fmt.Sprint(v)}
		case string:
			m[kv[i].(string)] = archive.Axis{Label: v}
		}
	}
	return m
}

func finished(a map[string]archive.Axis, bps float64) *archive.Run {
	return &archive.Run{State: archive.StateFinished, Axes: a, Summary: archive.Summary{ReceivedBps: f64(bps)}}
}

// gridRuns: two windows by two stream counts, 4M × 2 streams missing.
func gridRuns() []*archive.Run {
	return []*archive.Run{
		finished(axes("window", 65536.0, "parallel", 1.0), 1.0e9),
		finished(axes("window", 65536.0, "parallel", 1.0), 1.2e9),
		finished(axes("window", 65536.0, "parallel", 2.0), 9.4e8),
		finished(axes("window", 4194304.0, "parallel", 1.0), 2.5e10),
		finished(axes("window", 4194304.0, "parallel", 1.0), 2.6e10),
	}
}

func pivot(t *testing.T, runs []*archive.Run, rows, cols, value string) *archive.Table {
	t.Helper()
	tab, _, err := archive.Pivot(runs, rows, cols, value, archive.StatMean)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// Each cell is a point with its mean, min, max and count; a series has no
// point where its cell is missing.
func TestSweepOf(t *testing.T) {
	footer := plot.Footer{Subject: "campaign grid"}
	in, err := SweepOf(pivot(t, gridRuns(), "window", "parallel", "received_bits_per_second"), footer)
	if err != nil {
		t.Fatal(err)
	}
	if in.Title != "Goodput against socket buffer (-w)" || in.X != (plot.Axis{Label: "Socket buffer (-w)", Quantity: plot.Bytes}) ||
		in.Y != (plot.Axis{Label: "Goodput", Quantity: plot.BitRate}) || in.Stat != "mean" || in.Footer.Subject != "campaign grid" {
		t.Errorf("sweep %q, x %+v, y %+v, stat %q", in.Title, in.X, in.Y, in.Stat)
	}
	want := []plot.SweepSeries{
		{Name: "parallel 1", Points: []plot.SweepPoint{{X: 65536, Y: 1.1e9, Min: 1e9, Max: 1.2e9, N: 2}, {X: 4194304, Y: 2.55e10, Min: 2.5e10, Max: 2.6e10, N: 2}}},
		{Name: "parallel 2", Points: []plot.SweepPoint{{X: 65536, Y: 9.4e8, Min: 9.4e8, Max: 9.4e8, N: 1}}},
	}
	if fmt.Sprint(in.Series) != fmt.Sprint(want) {
		t.Errorf("series %v\nwant %v", in.Series, want)
	}

	// Spacing reads in µs.
	spaced := []*archive.Run{finished(axes("spacing", 20e-6, "length", 512.0), 1e8)}
	in, err = SweepOf(pivot(t, spaced, "spacing", "length", "received_bits_per_second"), footer)
	if err != nil || in.X.Quantity != plot.Micros || math.Abs(in.Series[0].Points[0].X-20) > 1e-9 {
		t.Errorf("spacing: %v, %+v", err, in)
	}
}

func TestSweepOfBadAxes(t *testing.T) {
	words := []*archive.Run{finished(axes("direction", "up", "parallel", 1.0), 1e9)}
	_, err := SweepOf(pivot(t, words, "direction", "parallel", "received_bits_per_second"), plot.Footer{Subject: "campaign g"})
	var ae *AxisError
	if !errors.As(err, &ae) || err.Error() != `--x direction: "up" is not a number; put the axis on --series instead` {
		t.Errorf("words along x: %v", err)
	}
	_, err = SweepOf(pivot(t, nil, "window", "parallel", "received_bits_per_second"), plot.Footer{Subject: "campaign g"})
	if err == nil || errors.As(err, &ae) || err.Error() != "campaign g has no finished runs with received_bits_per_second along window" {
		t.Errorf("no cells: %v (an axis error: %v)", err, errors.As(err, &ae))
	}
}

// Rows are y, columns x; a missing cell is NaN; an axis of words is
// named by its labels.
func TestHeatmapOf(t *testing.T) {
	in, err := HeatmapOf(pivot(t, gridRuns(), "parallel", "window", "received_bits_per_second"), plot.Footer{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Title != "Goodput over window × parallel" || in.X.Label != "Socket buffer (-w)" || in.Y.Label != "Streams (-P)" ||
		in.Value.Quantity != plot.BitRate || fmt.Sprint(in.XValues) != "[65536 4.194304e+06]" || fmt.Sprint(in.YValues) != "[1 2]" ||
		in.XLabels != nil || in.YLabels != nil {
		t.Errorf("heatmap %+v", in)
	}
	if fmt.Sprint(in.Cells) != "[[1.1e+09 2.55e+10] [9.4e+08 NaN]]" {
		t.Errorf("cells %v", in.Cells)
	}
	cc := []*archive.Run{
		finished(axes("congestion", "cubic", "parallel", 1.0), 1e9),
		finished(axes("congestion", "bbr", "parallel", 1.0), 2e9),
	}
	in, err = HeatmapOf(pivot(t, cc, "parallel", "congestion", "received_bits_per_second"), plot.Footer{})
	if err != nil || fmt.Sprint(in.XLabels) != "[bbr cubic]" || fmt.Sprint(in.Cells) != "[[2e+09 1e+09]]" {
		t.Errorf("words across: %v, %+v", err, in)
	}
	if _, err := HeatmapOf(pivot(t, nil, "parallel", "window", "retransmits"), plot.Footer{Subject: "campaign g"}); err == nil ||
		err.Error() != "campaign g has no finished runs with retransmits over window × parallel" {
		t.Errorf("no cells: %v", err)
	}
}

// The footer names the hosts in the order the runs started, the first
// start and the first version recorded.
func TestCampaignFooter(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	runs := []*archive.Run{
		{ID: "late", Started: at.Add(time.Hour), LocalHost: "c", RemoteHost: "a", ToolVersion: "v2"},
		{ID: "never"},
		{ID: "early", Started: at, LocalHost: "a", RemoteHost: "b", ToolVersion: "v1"},
	}
	f := CampaignFooter("grid", runs)
	if f.Subject != "campaign grid" || fmt.Sprint(f.Hosts) != "[a b c]" || !f.Date.Equal(at) || f.Version != "v1" {
		t.Errorf("footer %+v", f)
	}
	if runs[0].ID != "never" || runs[1].ID != "early" {
		t.Errorf("runs not sorted by their start: %s, %s, %s", runs[0].ID, runs[1].ID, runs[2].ID)
	}
}

func udpRun(spacing, size, bps, lost float64, ooo, sent int64) *archive.Run {
	return &archive.Run{State: archive.StateFinished, Axes: axes("spacing", spacing, "length", size, "proto", "udp"),
		Summary: archive.Summary{ReceivedBps: f64(bps), LostPercent: f64(lost), OutOfOrder: i64(ooo), SentBytes: i64(sent)}}
}

// Each point is the repetitions' mean; re-ordering is the mean out of
// order over the mean datagrams sent; sizes largest first.
func TestUDPMonCampaignOf(t *testing.T) {
	runs := []*archive.Run{
		udpRun(0, 512, 4e8, 1, 10, 512000), udpRun(0, 512, 6e8, 3, 30, 1024000),
		udpRun(20e-6, 512, 2e8, 0, 0, 512000),
		udpRun(20e-6, 1472, 5e8, 0, 5, 1472000),
	}
	if !IsUDPMonCampaign(runs) {
		t.Fatal("a spacing × length UDP campaign is not a udpmon campaign")
	}
	in, err := UDPMonCampaignOf(runs, "um", plot.Footer{Subject: "campaign um"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Title != "UDPmon: goodput against spacing" || in.Rate != "Goodput" || len(in.Series) != 2 {
		t.Fatalf("udpmon %+v", in)
	}
	big, small := in.Series[0], in.Series[1]
	if big.Name != "1472 B" || big.DatagramBits != 1472*8 || small.Name != "512 B" || small.DatagramBits != 512*8 {
		t.Errorf("series %q %g, %q %g", big.Name, big.DatagramBits, small.Name, small.DatagramBits)
	}
	// 512 B at 0 µs: means 5e8 bit/s, 2 % lost, 20 out of order of
	// 768000 / 512 = 1500 sent.
	want0 := plot.UDPMonPoint{SpacingUs: 0, BitsPerSecond: 5e8, LossPercent: 2, ReorderedPercent: 100 * 20.0 / 1500}
	if len(small.Points) != 2 || small.Points[0] != want0 || math.Abs(small.Points[1].SpacingUs-20) > 1e-9 || small.Points[1].BitsPerSecond != 2e8 {
		t.Errorf("512 B points %+v, want first %+v", small.Points, want0)
	}
	if len(big.Points) != 1 || big.Points[0].ReorderedPercent != 100*5.0/1000 {
		t.Errorf("1472 B points %+v", big.Points)
	}
}

func TestUDPMonCampaignOfBadInput(t *testing.T) {
	_, err := UDPMonCampaignOf(gridRuns(), "g", plot.Footer{})
	var ae *AxisError
	want := "campaign g has no spacing axis (axes: parallel, window): plot udpmon draws a UDP sizes × spacings campaign (wireperf sweep HOST -u -l SIZES --spacing GAPS)"
	if !errors.As(err, &ae) || err.Error() != want {
		t.Errorf("a TCP campaign: %v", err)
	}
	_, err = UDPMonCampaignOf(nil, "empty", plot.Footer{})
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "(axes: none)") {
		t.Errorf("no runs: %v", err)
	}
	failed := udpRun(0, 512, 4e8, 0, 0, 512000)
	failed.State = archive.StateFailed
	if _, err := UDPMonCampaignOf([]*archive.Run{failed}, "f", plot.Footer{}); err == nil || errors.As(err, &ae) ||
		err.Error() != "campaign f has no finished runs with a goodput to draw" {
		t.Errorf("no finished runs: %v", err)
	}
}

func TestIsUDPMonCampaign(t *testing.T) {
	tcp := udpRun(0, 512, 1e8, 0, 0, 1)
	tcp.Axes["proto"] = archive.Axis{Label: "tcp"}
	for _, tc := range []struct {
		name string
		runs []*archive.Run
		want bool
	}{
		{"spacing × length", []*archive.Run{udpRun(0, 512, 1e8, 0, 0, 1)}, true},
		{"a TCP run among them", []*archive.Run{udpRun(0, 512, 1e8, 0, 0, 1), tcp}, false},
		{"no length", []*archive.Run{finished(axes("spacing", 0.0), 1)}, false},
		{"window × parallel", gridRuns(), false},
	} {
		if got := IsUDPMonCampaign(tc.runs); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

// Stored udpmon sweeps are drawn from their documents: one alone, two
// overlaid under their run IDs; runs with axes, failed runs and other
// documents are left out.
func TestStoredSweeps(t *testing.T) {
	ctx := context.Background()
	store, err := archive.Open(ctx, archivetest.Backends(t)["sqlite"])
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	sweepDoc := func(bps float64) []byte {
		b, err := json.Marshal(map[string]any{"kind": "udpmon", "sweep": udpmon.Sweep{Server: "b", Points: []udpmon.Point{
			{Size: 512, Spacing: 20 * time.Microsecond, RecvWireBps: bps, Sent: 100}}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	put := func(id, state string, a map[string]archive.Axis, doc []byte) *archive.Run {
		r := &archive.Run{ID: id, Campaign: "path", State: state, Source: archive.SourceNative, Axes: a,
			Document: doc, DocumentFormat: archive.FormatJSON}
		if err := store.PutRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		// As List gives them: without their documents.
		r.Document = nil
		return r
	}
	if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "path", Spec: "x", SpecFormat: "flags", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	others := []*archive.Run{
		put("bulk", archive.StateFinished, axes("parallel", 1.0), sweepDoc(1)),
		put("broken", archive.StateFailed, nil, sweepDoc(2)),
		put("test", archive.StateFinished, nil, []byte(`{"start":{}}`)),
	}
	if fig, err := StoredSweeps(ctx, store, others); fig != nil || err != nil {
		t.Fatalf("no stored sweep: %v, %v", fig, err)
	}
	one := put("s1", archive.StateFinished, nil, sweepDoc(3e8))
	fig, err := StoredSweeps(ctx, store, append(others, one))
	if err != nil || fig.Panels[0].Find("512 B") == nil || fig.Panels[0].Find("512 B").Points[0].Y != 3e8 ||
		fig.Footer.Subject != "run s1 of campaign path" {
		t.Fatalf("one sweep: %v %+v", err, fig)
	}
	two := put("s2", archive.StateFinished, nil, sweepDoc(4e8))
	fig, err = StoredSweeps(ctx, store, []*archive.Run{one, two})
	if err != nil {
		t.Fatal(err)
	}
	for id, bps := range map[string]float64{"s1": 3e8, "s2": 4e8} {
		s := fig.Panels[0].Find("run " + id + ": 512 B")
		if s == nil || s.Points[0].Y != bps {
			t.Errorf("run %s's sweep in the overlay: %+v", id, s)
		}
	}
}
