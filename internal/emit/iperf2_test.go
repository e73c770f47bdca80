package emit

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

func renderIperf2(t *testing.T, e Emitter, r *result.Result) string {
	t.Helper()
	if err := Replay(e, r); err != nil {
		t.Fatal(err)
	}
	switch w := e.(type) {
	case *Iperf2Enhanced:
		return w.W.(*bytes.Buffer).String()
	case *Iperf2CSV:
		return w.W.(*bytes.Buffer).String()
	}
	return ""
}

func TestIperf2EnhancedGolden(t *testing.T) {
	for name, r := range map[string]*result.Result{
		"iperf2-enhanced-P2.golden":      parallelResult(),
		"iperf2-enhanced-reverse.golden": reverseResult(),
		"iperf2-enhanced-udp.golden":     udpForwardResult(),
	} {
		t.Run(name, func(t *testing.T) {
			checkGolden(t, name, renderIperf2(t, &Iperf2Enhanced{W: &bytes.Buffer{}}, r))
		})
	}
}

// Each -y C line has iperf2's nine columns, fourteen with a UDP
// receiver's figures; the bytes are the result's, exactly.
func TestIperf2CSVColumns(t *testing.T) {
	r := parallelResult()
	out := renderIperf2(t, &Iperf2CSV{W: &bytes.Buffer{}}, r)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// Three rows of two streams and a sum, then the totals likewise.
	if len(lines) != 4*3 {
		t.Fatalf("%d lines, want 12:\n%s", len(lines), out)
	}
	for i, l := range lines {
		cols := strings.Split(l, ",")
		if len(cols) != 9 {
			t.Fatalf("line %d has %d columns: %q", i+1, len(cols), l)
		}
		if len(cols[0]) != 14 {
			t.Errorf("line %d: timestamp %q, want YYYYMMDDhhmmss", i+1, cols[0])
		}
	}
	first := strings.Split(lines[0], ",")
	if want := []string{"127.0.0.1", "40001", "127.0.0.1", "5201", "1", "0.0-1.0"}; strings.Join(first[1:7], ",") != strings.Join(want, ",") {
		t.Errorf("first line %q, want addresses, ID and interval %v", lines[0], want)
	}
	if got, want := first[7], r.Local.Intervals[0].Streams[0].Bytes; got != strconv.FormatInt(want, 10) {
		t.Errorf("first line's bytes %s, the result's %d", got, want)
	}
	if sum := strings.Split(lines[2], ","); sum[5] != "-1" || sum[2] != "0" {
		t.Errorf("third line %q: want the sum, ID -1 and source port 0", lines[2])
	}
	udp := renderIperf2(t, &Iperf2CSV{W: &bytes.Buffer{}}, udpReverseResult())
	for _, l := range strings.Split(strings.TrimSuffix(udp, "\n"), "\n") {
		if n := len(strings.Split(l, ",")); n != 14 {
			t.Errorf("UDP receiver's line has %d columns, want 14: %q", n, l)
		}
	}
}

// -e's Write column: each row shows the write calls counted during it and
// the total line their sum, however the bytes divide by -l (on a long
// path the rows showed 5+11+10+1 = 27 writes against a total of 102).
func TestIperf2EnhancedWritesAddUp(t *testing.T) {
	r := parallelResult()
	rowCalls := map[int][]int64{1: {5, 11, 10}, 2: {7, 3, 1}}
	for i := range r.Local.Intervals {
		for j := range r.Local.Intervals[i].Streams {
			si := &r.Local.Intervals[i].Streams[j]
			si.Calls = rowCalls[si.ID][i]
		}
	}
	for j := range r.Local.Streams {
		s := &r.Local.Streams[j]
		s.Calls = 0
		for _, c := range rowCalls[s.ID] {
			s.Calls += c
		}
	}
	out := renderIperf2(t, &Iperf2Enhanced{W: &bytes.Buffer{}}, r)
	writes := map[string][]int64{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 8 || !strings.HasPrefix(l, "[") {
			continue
		}
		tag := l[:5]
		for _, w := range f {
			if n, ok := strings.CutSuffix(w, "/0"); ok {
				v, err := strconv.ParseInt(n, 10, 64)
				if err != nil {
					t.Fatalf("write count %q in %q", w, l)
				}
				writes[tag] = append(writes[tag], v)
			}
		}
	}
	for tag, want := range map[string][]int64{"[  1]": {5, 11, 10, 26}, "[  2]": {7, 3, 1, 11}, "[SUM]": {12, 14, 11, 37}} {
		got := writes[tag]
		if len(got) != len(want) {
			t.Fatalf("%s: write counts %v, want %v:\n%s", tag, got, want, out)
		}
		var sum int64
		for i, v := range got[:len(got)-1] {
			sum += v
			if v != want[i] {
				t.Errorf("%s row %d: %d writes, want the %d counted", tag, i, v, want[i])
			}
		}
		if total := got[len(got)-1]; total != sum {
			t.Errorf("%s: rows add up to %d writes, the total says %d:\n%s", tag, sum, total, out)
		}
	}
}
