package pivotfmt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/campaign"
)

func f64(v float64) *float64 { return &v }

// gridRuns are two windows (one as the user wrote it, one a bare number)
// by two stream counts; 4M × 2 streams has no run.
func gridRuns() []*archive.Run {
	run := func(window archive.Axis, streams, bps float64) *archive.Run {
		return &archive.Run{State: archive.StateFinished,
			Axes:    map[string]archive.Axis{"window": window, "parallel": {Num: f64(streams)}},
			Summary: archive.Summary{ReceivedBps: f64(bps)}}
	}
	k64 := archive.Axis{Num: f64(65536), Label: "64K"}
	m4 := archive.Axis{Num: f64(4 << 20)}
	return []*archive.Run{
		run(k64, 1, 1.0e9), run(k64, 1, 1.2e9), run(k64, 2, 9.4e8),
		run(m4, 1, 2.5e10), run(m4, 1, 2.6e10),
	}
}

func gridTable(t *testing.T) *archive.Table {
	t.Helper()
	tab, _, err := archive.Pivot(gridRuns(), "window", "parallel", "received_bits_per_second", archive.StatMean)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestAxisText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		axis string
		a    archive.Axis
		want string
	}{
		// One form whoever wrote the value: a native -w 64k, an iperf2
		// log's "64.0 KByte", a document's bare number.
		{"window", archive.Axis{Num: f64(65536), Label: "64k"}, "64K"},
		{"window", archive.Axis{Num: f64(65536), Label: "64.0 KByte"}, "64K"},
		{"window", archive.Axis{Num: f64(4 << 20)}, "4M"},
		{"window", archive.Axis{Num: f64(1.5 * (1 << 20)), Label: "1536K"}, "1.5M"},
		{"window", archive.Axis{Label: "default"}, "default"},
		{"length", archive.Axis{Num: f64(1472)}, "1.44K"},
		{"length", archive.Axis{Num: f64(512), Label: "512"}, "512"},
		{"bitrate", archive.Axis{Num: f64(2.5e8), Label: "250m"}, "250M"},
		{"time", archive.Axis{Num: f64(1.5)}, "1.5s"},
		{"time", archive.Axis{Num: f64(3), Label: "3"}, "3s"},
		{"time", archive.Axis{Num: f64(3), Label: "3s"}, "3s"},
		{"time", archive.Axis{Num: f64(120)}, "120s"},
		{"spacing", archive.Axis{Num: f64(20e-6)}, "20µs"},
		{"parallel", archive.Axis{Num: f64(4)}, "4"},
		{"direction", archive.Axis{Label: "up"}, "up"},
	} {
		if got := AxisText(tc.axis, tc.a); got != tc.want {
			t.Errorf("AxisText(%s, %v) = %q, want %q", tc.axis, tc.a.Label, got, tc.want)
		}
	}
}

func TestValueText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		v    float64
		want string
	}{
		{"received_bits_per_second", 9.4e8, "940 Mbits/sec"},
		{"sent_bytes", 1 << 20, "1.00 MBytes"},
		{"retransmits", 12, "12"},
		{"jitter_ms", 0.123456, "0.1235"},
		{"lost_percent", 0, "0"},
		{"cpu_remote_total", 42.5243, "42.5%"},
		{"sndbuf_granted_bytes", 425984, "416 KBytes"},
	} {
		if got := ValueText(tc.name, tc.v); got != tc.want {
			t.Errorf("ValueText(%s, %g) = %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
}

// The text table: each cell the mean with its spread in the mean's unit,
// "-" where no run is, columns as wide as their widest cell.
func TestWriteText(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteText(&b, gridTable(t))
	want := "received_bits_per_second, mean over repetitions (min–max, n=runs)\n" +
		"window \\ parallel  1                                2\n" +
		"64K                1.10 Gbits/sec (1.00–1.20, n=2)  940 Mbits/sec (n=1)\n" +
		"4M                 25.5 Gbits/sec (25.0–26.0, n=2)  -\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	WriteText(&b, &archive.Table{RowAxis: "window", Value: "received_bits_per_second", Stat: archive.StatMean})
	if b.String() != "no finished runs with these axes and this value\n" {
		t.Errorf("an empty table: %q", b.String())
	}
}

func TestWriteMarkdown(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteMarkdown(&b, gridTable(t))
	want := "| window \\ parallel | 1                               | 2                   |\n" +
		"| ----------------- | ------------------------------- | ------------------- |\n" +
		"| 64K               | 1.10 Gbits/sec (1.00–1.20, n=2) | 940 Mbits/sec (n=1) |\n" +
		"| 4M                | 25.5 Gbits/sec (25.0–26.0, n=2) | -                   |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// One column: the header names the value.
func TestGridOneColumn(t *testing.T) {
	t.Parallel()
	tab, _, err := archive.Pivot(gridRuns(), "parallel", "", "received_bits_per_second", archive.StatMax)
	if err != nil {
		t.Fatal(err)
	}
	g := Grid(tab)
	if got := fmt.Sprint(g); got != "[[parallel received_bits_per_second] [1 26.0 Gbits/sec (1.00–26.0, n=4)] [2 940 Mbits/sec (n=1)]]" {
		t.Errorf("grid %s", got)
	}
}

// A cell whose range spans units shows each end in its own: the slow
// run reads 2.60 Mbits/sec, not 0.00.
func TestSpreadAcrossUnits(t *testing.T) {
	t.Parallel()
	run := func(bps float64) *archive.Run {
		return &archive.Run{State: archive.StateFinished, Axes: map[string]archive.Axis{"window": {Num: f64(65536)}},
			Summary: archive.Summary{ReceivedBps: f64(bps)}}
	}
	for _, tc := range []struct {
		bps  []float64
		want string
	}{
		{[]float64{2.6e6, 8.62e9, 0.3e8}, "2.88 Gbits/sec (2.60 Mbits/sec–8.62 Gbits/sec, n=3)"},
		{[]float64{1.0e9, 1.2e9}, "1.10 Gbits/sec (1.00–1.20, n=2)"},
		{[]float64{9.5e8, 1.2e9}, "1.07 Gbits/sec (950 Mbits/sec–1.20 Gbits/sec, n=2)"},
		{[]float64{500, 700}, "600 bits/sec (500 bits/sec–700 bits/sec, n=2)"},
	} {
		var runs []*archive.Run
		for _, v := range tc.bps {
			runs = append(runs, run(v))
		}
		tab, _, err := archive.Pivot(runs, "window", "", "received_bits_per_second", archive.StatMean)
		if err != nil {
			t.Fatal(err)
		}
		if got := Grid(tab)[1][1]; got != tc.want {
			t.Errorf("%v: cell %q, want %q", tc.bps, got, tc.want)
		}
	}
}

// CSV and JSON carry the numbers unrounded, axes in base units.
func TestWriteCSV(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteCSV(&b, gridTable(t)); err != nil {
		t.Fatal(err)
	}
	want := "window,parallel,received_bits_per_second,n,min,max\n" +
		"65536,1,1100000000,2,1000000000,1200000000\n" +
		"65536,2,940000000,1,940000000,940000000\n" +
		"4194304,1,25500000000,2,25000000000,26000000000\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	tab, _, err := archive.Pivot(gridRuns(), "window", "", "received_bits_per_second", archive.StatMean)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := WriteCSV(&b, tab); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "window,col,received_bits_per_second,n,min,max" {
		t.Errorf("one column's header %q", first)
	}
}

func TestWriteJSON(t *testing.T) {
	t.Parallel()
	tab := gridTable(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, tab); err != nil {
		t.Fatal(err)
	}
	var got struct {
		RowAxis string `json:"row_axis"`
		ColAxis string `json:"col_axis"`
		Value   string `json:"value"`
		Stat    string `json:"stat"`
		Rows    []float64
		Cols    []float64
		Cells   []struct {
			Row, Col, Value, Min, Max float64
			N                         int
		}
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.RowAxis != "window" || got.ColAxis != "parallel" || got.Value != "received_bits_per_second" || got.Stat != "mean" ||
		fmt.Sprint(got.Rows) != "[65536 4.194304e+06]" || fmt.Sprint(got.Cols) != "[1 2]" || len(got.Cells) != len(tab.Cells) {
		t.Fatalf("%s", b.String())
	}
	for i, c := range tab.Cells {
		g := got.Cells[i]
		if g.Row != *tab.Rows[c.Row].Num || g.Col != *tab.Cols[c.Col].Num || g.Value != c.Value || g.N != c.N || g.Min != c.Min || g.Max != c.Max {
			t.Errorf("cell %d: %+v, the pivot's %+v", i, g, c)
		}
	}
	// Words stay words; an empty table is empty arrays, not null.
	b.Reset()
	if err := WriteJSON(&b, &archive.Table{RowAxis: "direction", Value: "received_bits_per_second", Stat: "mean"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"rows": []`) || !strings.Contains(b.String(), `"cells": []`) || strings.Contains(b.String(), "col_axis") {
		t.Errorf("an empty table: %s", b.String())
	}
}

// The notes come from the smallest rmem_max and wmem_max any stored run
// reported: 16M and 8M windows are above a 4M rmem_max.
func TestCappedWindowNotes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for backend, dsn := range archivetest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			store, err := archive.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			var runs []*archive.Run
			for i, w := range []float64{1 << 20, 8 << 20, 16 << 20, 8 << 20} {
				r := &archive.Run{ID: fmt.Sprintf("r%d", i), State: archive.StateFinished, Source: archive.SourceNative,
					Axes: map[string]archive.Axis{campaign.AxisWindow: {Num: f64(w)}}}
				switch i {
				case 0:
					r.Limits = []archive.HostLimits{{Host: "local", Limits: `{"rmem_max":16777216,"wmem_max":8388608}`}}
				case 1:
					r.Limits = []archive.HostLimits{{Host: "remote", Limits: `{"rmem_max":4194304}`}}
				case 2:
					r.Limits = []archive.HostLimits{{Host: "remote", Limits: `not json`}}
				}
				if err := store.PutRun(ctx, r); err != nil {
					t.Fatal(err)
				}
				runs = append(runs, r)
			}
			got := CappedWindowNotes(ctx, store, runs)
			want := "-w 8.00 MBytes, -w 16.0 MBytes: net.core.rmem_max is 4.00 MBytes, so the kernel grants -w 8.00 MBytes and -w 16.0 MBytes what it grants -w 4.00 MBytes; their results repeat that window's"
			if len(got) != 1 || got[0] != want {
				t.Errorf("notes %q\nwant %q", got, want)
			}
			if got := CappedWindowNotes(ctx, store, runs[:1]); len(got) != 0 {
				t.Errorf("a 1M window under 8M limits: %q", got)
			}
		})
	}
}

// Write prints each format as its own writer does, and refuses another.
func TestWrite(t *testing.T) {
	t.Parallel()
	tab := gridTable(t)
	writers := map[string]func(w *strings.Builder){
		"text":     func(w *strings.Builder) { WriteText(w, tab) },
		"markdown": func(w *strings.Builder) { WriteMarkdown(w, tab) },
		"csv":      func(w *strings.Builder) { _ = WriteCSV(w, tab) },
		"json":     func(w *strings.Builder) { _ = WriteJSON(w, tab) },
	}
	for _, format := range Formats {
		var got, want strings.Builder
		if err := Write(&got, tab, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		writers[format](&want)
		if got.String() != want.String() || got.Len() == 0 {
			t.Errorf("%s:\n%s\nwant:\n%s", format, got.String(), want.String())
		}
	}
	if err := Write(&strings.Builder{}, tab, "xml"); err == nil || !strings.Contains(err.Error(), "xml") {
		t.Errorf("xml: %v", err)
	}
}

// The text table says why it is empty under the line that says so.
func TestWriteTextSaysWhyEmpty(t *testing.T) {
	t.Parallel()
	runs := []*archive.Run{{State: archive.StateFinished, Axes: map[string]archive.Axis{"window": {Num: f64(65536)}},
		Summary: archive.Summary{SentBps: f64(9e8)}}}
	tab, _, err := archive.Pivot(runs, "window", "", "received_bits_per_second", archive.StatMean)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WriteText(&b, tab)
	if want := "no finished runs with these axes and this value\n1 run has only sender figures: try --value sent_bits_per_second\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
