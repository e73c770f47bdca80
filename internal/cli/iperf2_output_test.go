package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/logimport"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/runner"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// runClientCaptured runs a client test with args against the server on
// port the way runClient does (its flags, its emitter, its observer) and
// returns both the result and what the emitter wrote.
func runClientCaptured(t *testing.T, port int, args ...string) (*result.Result, string) {
	t.Helper()
	f := newClientFlags()
	cmd := &cobra.Command{Use: "client"}
	f.register(cmd)
	if err := cmd.Flags().Parse(append([]string{"-p", strconv.Itoa(port)}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := f.finish(cmd); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	em := runner.ClientEmitter(&f.Client, &out)
	obs := &emit.Observer{Emitter: em, Host: "127.0.0.1", Port: f.Port}
	res, err := runner.Client(context.Background(), &f.Client, "127.0.0.1", runner.Options{Observer: obs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("test failed: %v (%s)", err, errb.String())
	}
	if err := em.Summary(res); err != nil || obs.Err != nil {
		t.Fatalf("writing the report: %v %v", err, obs.Err)
	}
	return res, out.String()
}

// printed is how a format rounds the run's figures: times, bytes and
// rates as the text shows them, for the importer to read back.
type printed struct {
	time          func(float64) float64
	bytes         func(int64) float64
	rate          func(bits float64) float64
	jitter        func(float64) float64
	outOfOrder    bool // the format carries out-of-order datagrams
	serverReports bool // a UDP sender's server report is marked as one
}

func roundTo(format string) func(float64) float64 {
	return func(v float64) float64 {
		x, _ := strconv.ParseFloat(strings.TrimSpace(fmt.Sprintf(format, v)), 64)
		return x
	}
}

var csvPrinted = printed{
	time:       roundTo("%.1f"),
	bytes:      func(b int64) float64 { return float64(b) },
	rate:       func(bits float64) float64 { return float64(int64(bits)) },
	jitter:     roundTo("%.3f"),
	outOfOrder: true,
}

// fromText reads a figure back from units' text: "1.11 GBytes" is
// 1.11 × 2^30 bytes, "19.1 Gbits/sec" 19.1 × 10^9 bit/s.
func fromText(s string) float64 {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), " ")
	v, _ := strconv.ParseFloat(num, 64)
	step := 1000.0
	if strings.Contains(unit, "Bytes") {
		step = 1024
	}
	scale := 1.0
	for _, prefix := range []string{"K", "M", "G", "T"} {
		scale *= step
		if strings.HasPrefix(unit, prefix) {
			return v * scale
		}
	}
	return v
}

var enhancedPrinted = printed{
	time:          roundTo("%4.2f"),
	bytes:         func(b int64) float64 { return fromText(units.FormatTransfer(float64(b), 'a')) },
	rate:          func(bits float64) float64 { return fromText(units.FormatRate(bits, 'a')) },
	jitter:        roundTo("%6.3f"),
	serverReports: true,
}

// expectedLines are the lines the importer must read from the output of
// run r in format p: each stream's local figures per row and over the
// test, a sum per direction with several streams, and a UDP sender's
// server report.
func expectedLines(r *result.Result, p printed) []logimport.Line {
	var out []logimport.Line
	line := func(id string, start, end float64, bytes int64, seconds float64, u *result.UDP) logimport.Line {
		l := logimport.Line{ID: id, Start: p.time(start), End: p.time(end), Bytes: p.bytes(bytes), BitsPerSecond: p.rate(result.Rate(bytes, seconds))}
		if u != nil && u.Expected > 0 {
			j, lost, total := p.jitter(u.JitterMs), u.Lost, u.Expected
			l.Jitter, l.Lost, l.Total = &j, &lost, &total
			if p.outOfOrder {
				ooo := u.Reordered
				l.OutOfOrder = &ooo
			}
		}
		return l
	}
	local := func(sends bool, u *result.UDP) *result.UDP {
		if sends {
			return nil
		}
		return u
	}
	var rows []result.IntervalRow
	for _, row := range r.IntervalRows() {
		// A tail shorter than a tenth of -i is joined to the row before.
		if n := len(rows); n > 0 && row.ShortTail(r.Spec.Interval) && !row.Omitted {
			rows[n-1] = rows[n-1].Join(row)
		} else if !row.Omitted {
			rows = append(rows, row)
		}
	}
	for _, row := range rows {
		var sum int64
		n := 0
		for _, f := range row.Flows {
			si, span, sends := f.Received, f.ReceivedSpan, false
			if f.SenderRole == r.Local.Role {
				si, span, sends = f.Sent, f.SentSpan, true
			}
			if si == nil || si.Bytes < 0 {
				continue // a tail that takes bytes back: iperf2 has no such row
			}
			out = append(out, line(strconv.Itoa(f.ID), row.Start, row.End, si.Bytes, span.Seconds(), local(sends, si.UDP)))
			sum += si.Bytes
			n++
		}
		if n > 1 {
			out = append(out, line("SUM", row.Start, row.End, sum, row.End-row.Start, nil))
		}
	}
	var totals []*result.Stream
	var reports []logimport.Line // -y C gives them after the sums
	for _, f := range r.Flows() {
		s, sends := f.Received, false
		if f.SenderRole == r.Local.Role {
			s, sends = f.Sent, true
		}
		out = append(out, line(strconv.Itoa(f.ID), s.Start, s.End, s.Bytes, s.Seconds(), local(sends, s.UDP)))
		if sends && s.UDP != nil && f.Received != nil {
			rl := line(strconv.Itoa(f.ID), f.Received.Start, f.Received.End, f.Received.Bytes, f.Received.Seconds(), f.Received.UDP)
			rl.ServerReport = p.serverReports
			if p.serverReports {
				out = append(out, rl) // the text gives it right after the stream's line
			} else {
				reports = append(reports, rl)
			}
		}
		totals = append(totals, s)
	}
	if len(totals) > 1 {
		sum := result.SumStreams(totals)
		out = append(out, line("SUM", sum.Start, sum.End, sum.Bytes, sum.Seconds, nil))
	}
	return append(out, reports...)
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestIperf2OutputReadsBack(t *testing.T) {
	port := startServer(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"tcp -P 2", []string{"-t", "1", "-i", "0.5", "-P", "2"}},
		{"tcp -R", []string{"-t", "1", "-i", "0.5", "-R"}},
		{"udp", []string{"-t", "1", "-i", "0.5", "-u", "-b", "20m"}},
		{"udp -R", []string{"-t", "1", "-i", "0.5", "-u", "-b", "20m", "-R"}},
	} {
		t.Run(tc.name+" -y C", func(t *testing.T) {
			res, out := runClientCaptured(t, port, append(tc.args, "-y", "C")...)
			test, started, err := logimport.ParseIperf2CSV([]byte(out))
			if err != nil {
				t.Fatalf("the importer cannot read -y C: %v\n%s", err, out)
			}
			wantProto := map[bool]string{true: "udp", false: "tcp"}[res.Spec.Protocol == spec.UDP]
			if test.Proto != wantProto || test.LocalHost != "127.0.0.1" || test.RemoteHost != "127.0.0.1" {
				t.Errorf("read as %s from %s to %s", test.Proto, test.LocalHost, test.RemoteHost)
			}
			if d := started.Sub(res.StartedAt); d < -1e9 || d > 3e9 {
				t.Errorf("first line's timestamp %v, the test started %v", started, res.StartedAt)
			}
			if want := expectedLines(res, csvPrinted); !reflect.DeepEqual(test.Lines, want) {
				t.Errorf("read back:\n%s\nwant:\n%s\nfrom:\n%s", dumpLines(test.Lines), dumpLines(want), out)
			}
		})
		t.Run(tc.name+" -e", func(t *testing.T) {
			res, out := runClientCaptured(t, port, append(tc.args, "-e")...)
			tests, err := logimport.ParseIperf2Text([]byte(out))
			if err != nil || len(tests) != 1 {
				t.Fatalf("the importer found %d tests in -e output (%v), want 1:\n%s", len(tests), err, out)
			}
			test := tests[0]
			var ids []string
			for _, f := range res.Flows() {
				ids = append(ids, strconv.Itoa(f.ID))
			}
			if test.Role != "client" || test.RemoteHost != "127.0.0.1" || !reflect.DeepEqual(sortedKeys(test.Streams), ids) {
				t.Errorf("read as %q to %q with streams %v, want client to 127.0.0.1 with %v", test.Role, test.RemoteHost, sortedKeys(test.Streams), ids)
			}
			if want := expectedLines(res, enhancedPrinted); !reflect.DeepEqual(test.Lines, want) {
				t.Errorf("read back:\n%s\nwant:\n%s\nfrom:\n%s", dumpLines(test.Lines), dumpLines(want), out)
			}
		})
	}
}

func dumpLines(ls []logimport.Line) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "  %s %.2f-%.2f %.0f B %.0f bit/s", l.ID, l.Start, l.End, l.Bytes, l.BitsPerSecond)
		if l.Jitter != nil {
			fmt.Fprintf(&b, " jitter %.3f lost %d/%d", *l.Jitter, *l.Lost, *l.Total)
		}
		if l.OutOfOrder != nil {
			fmt.Fprintf(&b, " ooo %d", *l.OutOfOrder)
		}
		if l.ServerReport {
			b.WriteString(" (server report)")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestIperf2OutputFlagsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-y", "J"}, `-y "J"`},
		{[]string{"-y", "C", "-J"}, "choose the output"},
		{[]string{"-e", "--json-stream"}, "choose the output"},
		{[]string{"-e", "-y", "C"}, "choose the output"},
	} {
		code, out, stderr := runCLI(append([]string{"-c", "127.0.0.1"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}
