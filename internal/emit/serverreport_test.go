package emit

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the server report")

// serverView turns a synthetic client's result into the server's record
// of the same test: the server's end is local, and the client's rows
// never reached it (its end report carries none).
func serverView(r *result.Result) *result.Result {
	s := *r
	s.Local, s.Remote = r.Remote, r.Local
	s.Remote.Intervals = nil
	s.ServerAddr, s.ConnectHost, s.ConnectPort = "", "", 0
	return &s
}

func renderServerReport(t *testing.T, rep *ServerReport, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	rep.W = &b
	if err := rep.Write("t3", "127.0.0.1:40000", r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s\nwant:\n%s", name, got, want)
	}
}

func TestServerReportTextGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        *result.Result
		interval time.Duration
	}{
		{"server-report-forward.golden", serverView(forwardResult()), time.Second},
		{"server-report-P2-i2.golden", serverView(parallelResult()), 2 * time.Second},
		{"server-report-reverse.golden", serverView(reverseResult()), time.Second},
		{"server-report-no-rows.golden", serverView(forwardResult()), 0},
		{"server-report-udp-P2.golden", serverView(udpParallelResult()), time.Second},
		{"server-report-udp-reverse.golden", serverView(udpReverseResult()), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkGolden(t, tc.name, renderServerReport(t, &ServerReport{Interval: tc.interval}, tc.r))
		})
	}
}

func TestServerReportEveryLinePrefixed(t *testing.T) {
	out := renderServerReport(t, &ServerReport{Interval: time.Second}, serverView(bidirParallelResult()))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 10 {
		t.Fatalf("only %d lines:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "[t3 127.0.0.1:40000] ") {
			t.Errorf("line without the test's prefix: %q", l)
		}
	}
	findLine(t, out, "[t3 127.0.0.1:40000] Accepted connection from 127.0.0.1")
	findLine(t, out, "[t3 127.0.0.1:40000] [  1][TX-C]", "sender")
	findLine(t, out, "[t3 127.0.0.1:40000] [  1][TX-C]", "receiver")
}

// The joined rows add up to the rows they join: no byte is lost or
// counted twice when the server's -i is a multiple of the client's.
func TestServerReportJoinsRows(t *testing.T) {
	r := serverView(parallelResult())
	joined, note := serverRows(r, 2*time.Second)
	if note != "" {
		t.Fatalf("unexpected note %q", note)
	}
	if got := len(joined.Local.Intervals); got != 2 {
		t.Fatalf("%d joined rows from 3 of 1 s at -i 2s, want 2", got)
	}
	first := joined.Local.Intervals[0]
	if first.Start != 0 || first.End != 2 {
		t.Errorf("first joined row spans %v-%v, want 0-2", first.Start, first.End)
	}
	for _, id := range []int{1, 2} {
		var want, got int64
		for _, iv := range r.Local.Intervals[:2] {
			for _, s := range iv.Streams {
				if s.ID == id {
					want += s.Bytes
				}
			}
		}
		for _, s := range first.Streams {
			if s.ID == id {
				got += s.Bytes
			}
		}
		if got != want || want == 0 {
			t.Errorf("stream %d: joined row has %d bytes, the two rows %d", id, got, want)
		}
	}
	// Not a multiple: the rows stay the client's, and the report says so.
	same, note := serverRows(r, 1500*time.Millisecond)
	if same != r || !strings.Contains(note, "not a whole multiple") {
		t.Errorf("-i 1.5s over rows of 1s: got a changed result or note %q", note)
	}
}

func TestServerReportJSONLines(t *testing.T) {
	var b bytes.Buffer
	rep := &ServerReport{W: &b, JSON: true, Interval: time.Second}
	for _, id := range []string{"t1", "t2"} {
		if err := rep.Write(id, "127.0.0.1:40000", serverView(forwardResult())); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines for 2 tests, want one each:\n%s", len(lines), b.String())
	}
	for i, l := range lines {
		var doc struct {
			Test   string `json:"test"`
			Peer   string `json:"peer"`
			Result struct {
				End struct {
					SumReceived struct {
						Bytes int64 `json:"bytes"`
					} `json:"sum_received"`
				} `json:"end"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &doc); err != nil {
			t.Fatalf("line %d is not a JSON document: %v", i+1, err)
		}
		if doc.Test != []string{"t1", "t2"}[i] || doc.Peer != "127.0.0.1:40000" {
			t.Errorf("line %d: test %q peer %q", i+1, doc.Test, doc.Peer)
		}
		if doc.Result.End.SumReceived.Bytes != serverView(forwardResult()).Local.Streams[0].Bytes {
			t.Errorf("line %d: sum_received %d bytes, want the server's %d", i+1, doc.Result.End.SumReceived.Bytes, serverView(forwardResult()).Local.Streams[0].Bytes)
		}
	}
}

// A request-response test's report on the server says where it came
// from, not where it went.
func TestServerReportRR(t *testing.T) {
	s := spec.Default()
	s.Protocol, s.RRMode = spec.RR, spec.RRUDP
	r := &result.Result{Spec: s, Local: result.End{Role: result.RoleServer, RR: &result.RR{}}, Remote: result.End{Role: result.RoleClient}}
	out := renderServerReport(t, &ServerReport{Interval: time.Second}, r)
	first, _, _ := strings.Cut(out, "\n")
	if !strings.HasPrefix(first, "[t3 127.0.0.1:40000] Request-response from 127.0.0.1:40000: UDP") {
		t.Errorf("first line %q", first)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "[t3 127.0.0.1:40000] ") {
			t.Errorf("line without the test's prefix: %q", l)
		}
	}
}

// A test followed live prints what its report after the end would, but
// each row as soon as the server's row is complete: the client's rows
// as they come at the same -i, joined at a multiple (the last, shorter
// row at the end), with a note at the start when neither.
func TestServerReportLiveRows(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        *result.Result
		interval time.Duration
	}{
		{"same -i", serverView(forwardResult()), time.Second},
		{"joined 2 of 3", serverView(parallelResult()), 2 * time.Second},
		{"not a multiple", serverView(parallelResult()), 1500 * time.Millisecond},
		{"reverse", serverView(reverseResult()), time.Second},
		{"no rows", serverView(forwardResult()), 0},
		{"udp", serverView(udpParallelResult()), time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var whole bytes.Buffer
			if err := (&ServerReport{W: &whole, Interval: tc.interval}).Write("t3", "127.0.0.1:40000", tc.r); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			rep := &ServerReport{W: &b, Interval: tc.interval}
			live := rep.Live("t3", "127.0.0.1:40000")
			live.Started(tc.r)
			rows := tc.r.IntervalRows()
			var seen []int // bytes written after each row
			for _, row := range rows {
				live.Interval(tc.r, row)
				seen = append(seen, b.Len())
			}
			if err := rep.Write("t3", "127.0.0.1:40000", tc.r); err != nil {
				t.Fatal(err)
			}
			if b.String() != whole.String() {
				t.Fatalf("live report differs from the report at the end; live:\n%s\nat the end:\n%s", b.String(), whole.String())
			}
			if tc.interval == 0 || len(rows) == 0 {
				return
			}
			// Every server row complete before the end was written by then.
			k := 1
			if tc.interval%tc.r.Spec.Interval == 0 {
				k = int(tc.interval / tc.r.Spec.Interval)
			}
			for i, row := range rows {
				if (row.Index+1)%k != 0 || row.Tail {
					continue
				}
				upto := b.String()[:seen[i]]
				stamp := fmt.Sprintf("%.2f-%.2f", float64(row.Index+1-k)*tc.r.Spec.Interval.Seconds(), row.End)
				if !strings.Contains(upto, stamp) {
					t.Errorf("row %s not written by the time its last part came; written so far:\n%s", stamp, upto)
				}
			}
		})
	}
}
