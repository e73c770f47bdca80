package emit

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// renderText replays r through a Text emitter.
func renderText(t *testing.T, r *result.Result, opt Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Replay(&Text{W: &b, Opt: opt}, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// findLine returns the first line that starts with prefix and contains
// every one of subs, failing the test when there is none.
func findLine(t *testing.T, out, prefix string, subs ...string) string {
	t.Helper()
lines:
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		for _, s := range subs {
			if !strings.Contains(line, s) {
				continue lines
			}
		}
		return line
	}
	t.Fatalf("no line starting %q containing %q in:\n%s", prefix, subs, out)
	return ""
}

// sides splits an interval line at the bar into sender and receiver parts.
func sides(t *testing.T, line string) (sender, receiver string) {
	t.Helper()
	left, right, ok := strings.Cut(line, " | ")
	if !ok {
		t.Fatalf("no sender | receiver bar in %q", line)
	}
	return left, right
}

func TestTextHeader(t *testing.T) {
	sameAsRequested := forwardResult()
	for _, e := range []*result.End{&sameAsRequested.Local, &sameAsRequested.Remote} {
		e.Streams[0].Socket.SndBufGranted, e.Streams[0].Socket.RcvBufGranted = 2<<20, 2<<20
	}
	streamsDiffer := parallelResult()
	streamsDiffer.Remote.Streams[1].Socket.RcvBufGranted = 262144
	tests := []struct {
		name    string
		h       Header
		want    []string
		notWant []string
	}{
		{
			name: "window requested and changed by the kernel",
			h:    HeaderFromResult(forwardResult()),
			want: []string{
				"Connecting to host 127.0.0.1, port 5201\n",
				"[  1] local 127.0.0.1 port 40001 connected to 127.0.0.1 port 5201\n",
				"Client TCP window size: send 4.00 MBytes (WARNING: requested 2.00 MBytes), receive 4.00 MBytes (WARNING: requested 2.00 MBytes)\n",
				"Server TCP window size: send 416 KBytes (WARNING: requested 2.00 MBytes), receive 416 KBytes (WARNING: requested 2.00 MBytes)\n",
				bufferNote + "\n",
			},
			notWant: []string{"autotuned", "Reverse mode"},
		},
		{
			name:    "window granted as requested",
			h:       HeaderFromResult(sameAsRequested),
			want:    []string{"Client TCP window size: send 2.00 MBytes, receive 2.00 MBytes\n", bufferNote},
			notWant: []string{"WARNING"},
		},
		{
			name: "autotuned",
			h:    HeaderFromResult(parallelResult()),
			want: []string{
				"[  2] local 127.0.0.1 port 40002 connected to 127.0.0.1 port 5201\n",
				"Client TCP window size: send 16.0 KBytes (autotuned), receive 128 KBytes (autotuned)\n",
				"Server TCP window size: send 16.0 KBytes (autotuned), receive 128 KBytes (autotuned)\n",
			},
			notWant: []string{"WARNING", bufferNote},
		},
		{
			name: "streams granted different buffers",
			h:    HeaderFromResult(streamsDiffer),
			want: []string{
				"Client TCP window size: send 16.0 KBytes (autotuned)",
				"[  1] Server TCP window size: send 16.0 KBytes (autotuned), receive 128 KBytes (autotuned)\n",
				"[  2] Server TCP window size: send 16.0 KBytes (autotuned), receive 256 KBytes (autotuned)\n",
			},
		},
		{
			name: "reverse",
			h:    HeaderFromResult(reverseResult()),
			want: []string{"Reverse mode, remote host 127.0.0.1 is sending\n"},
		},
		{
			name: "bidir",
			h:    HeaderFromResult(bidirResult()),
			want: []string{
				"Bidirectional mode",
				"[  1][TX-C] local 127.0.0.1 port 40001 connected to 127.0.0.1 port 5201\n",
				"[  2][RX-C] local 127.0.0.1 port 40002 connected to 127.0.0.1 port 5201\n",
			},
		},
		{
			name:    "server address as host port N, no socket details",
			h:       Header{ServerAddr: "10.0.0.1 port 5999", Streams: []HeaderStream{{ID: 5, LocalAddr: "10.0.0.2:41000", RemoteAddr: "10.0.0.1:5999", Sender: true}}},
			want:    []string{"Connecting to host 10.0.0.1, port 5999\n", "[  5] local 10.0.0.2 port 41000 connected to 10.0.0.1 port 5999\n"},
			notWant: []string{"window size"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := (&Text{W: &b}).Header(tt.h); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("header lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("header has %q:\n%s", w, out)
				}
			}
			if n := strings.Count(out, bufferNote); n > 1 {
				t.Errorf("buffer note written %d times; want at most once", n)
			}
		})
	}
}

// TestTextIntervalSides checks that each flow line shows the sender's
// figures left of the bar and the receiver's right of it, whichever end
// sends.
func TestTextIntervalSides(t *testing.T) {
	tests := []struct {
		name string
		r    *result.Result
	}{
		{"forward", forwardResult()},
		{"reverse", reverseResult()},
		{"bidir", bidirResult()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := tt.r.IntervalRows()[0]
			// The rows point into the Result, so this sets what the ends
			// reported: figures the two sides cannot share.
			for i := range row.Flows {
				f := row.Flows[i]
				f.Sent.Bytes = 3_000_000_000 + int64(f.ID)*200_000_000
				f.Received.Bytes = 100_000_000 * int64(f.ID)
				f.Sent.Retransmits, f.Sent.RTTus, f.Sent.CwndBytes = 70+int64(f.ID), 1234, 3<<20
			}
			var b bytes.Buffer
			if err := (&Text{W: &b}).Interval(tt.r, row); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			bidir := tt.r.Spec.Bidir
			findLine(t, out, idColumn(bidir)+" Interval", "Written", "Bitrate", "Retr", "Cwnd", "RTT", "Received", "Goodput")
			for _, f := range row.Flows {
				line := findLine(t, out, flowTag(f.ID, f.SenderRole, bidir)+"   0.00-1.00   sec")
				left, right := sides(t, line)
				wantLeft := []string{
					units.FormatTransfer(float64(f.Sent.Bytes), 0) + "  " + units.FormatRate(float64(f.Sent.Bytes)*8, 0),
					" " + strconv.FormatInt(f.Sent.Retransmits, 10) + " ", "3.00 MBytes", "1.23ms",
				}
				for _, w := range wantLeft {
					if !strings.Contains(left, w) {
						t.Errorf("flow %d sender side %q lacks %q", f.ID, left, w)
					}
				}
				wantRight := units.FormatTransfer(float64(f.Received.Bytes), 0) + "  " + units.FormatRate(float64(f.Received.Bytes)*8, 0)
				if strings.TrimSpace(right) != strings.TrimSpace(wantRight) {
					t.Errorf("flow %d receiver side = %q; want %q", f.ID, right, wantRight)
				}
			}
		})
	}
}

// TestTextSums checks that each direction with several flows gets a
// [SUM] line whose figures add up its flows, and others get none.
func TestTextSums(t *testing.T) {
	tests := []struct {
		name     string
		r        *result.Result
		wantSums int // [SUM] lines per interval
	}{
		{"forward", forwardResult(), 0},
		{"bidir one stream each way", bidirResult(), 0},
		{"parallel", parallelResult(), 1},
		{"bidir parallel", bidirParallelResult(), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderText(t, tt.r, Options{})
			bidir := tt.r.Spec.Bidir
			row := tt.r.IntervalRows()[0]
			if got := strings.Count(out, "[SUM]"); got != tt.wantSums*(intervalsN+2) {
				t.Errorf("%d [SUM] lines; want %d per interval and 2 per direction in the summary:\n%s", got, tt.wantSums, out)
			}
			for _, d := range tt.r.Directions() {
				if len(d.Flows) < 2 {
					continue
				}
				var sent, received int64
				for _, f := range row.Flows {
					if f.SenderRole == d.SenderRole {
						sent += f.Sent.Bytes
						received += f.Received.Bytes
					}
				}
				sentText := units.FormatTransfer(float64(sent), 0)
				for _, f := range row.Flows {
					if units.FormatTransfer(float64(f.Sent.Bytes), 0) == sentText {
						t.Fatalf("test data: flow %d alone prints like the sum %q", f.ID, sentText)
					}
				}
				line := findLine(t, out, sumTag(d.SenderRole, bidir)+"   0.00-1.00   sec")
				left, right := sides(t, line)
				if !strings.Contains(left, sentText+"  "+units.FormatRate(float64(sent)*8, 0)) {
					t.Errorf("[SUM] sender side %q; want %s sent", left, sentText)
				}
				if !strings.Contains(right, units.FormatTransfer(float64(received), 0)) {
					t.Errorf("[SUM] receiver side %q; want %s received", right, units.FormatTransfer(float64(received), 0))
				}
				// The end block's sums come from the stream totals.
				sender := findLine(t, out, sumTag(d.SenderRole, bidir)+"   0.00-3.00   sec", "sender")
				fields := strings.Fields(sender)
				if got, want := fields[len(fields)-2], strconv.FormatInt(d.Sent.Retransmits, 10); got != want {
					t.Errorf("[SUM] sender retransmits %s; want %s in %q", got, want, sender)
				}
				findLine(t, out, sumTag(d.SenderRole, bidir)+"   0.00-3.00   sec", units.FormatTransfer(float64(d.Sent.Bytes), 0), "sender")
				findLine(t, out, sumTag(d.SenderRole, bidir)+"   0.00-3.00   sec", units.FormatTransfer(float64(d.Received.Bytes), 0), "receiver")
			}
		})
	}
}

func TestTextSummary(t *testing.T) {
	r := forwardResult()
	out := renderText(t, r, Options{})
	f := r.Flows()[0]
	sender := findLine(t, out, "[  1]   0.00-3.00   sec", units.FormatTransfer(float64(f.Sent.Bytes), 0), "sender")
	if fields := strings.Fields(sender); fields[len(fields)-2] != "6" {
		t.Errorf("sender line %q; want 6 retransmits before \"sender\"", sender)
	}
	received := units.FormatRate(result.Rate(f.Received.Bytes, f.Received.Seconds()), 0)
	findLine(t, out, "[  1]   0.00-3.00   sec", units.FormatTransfer(float64(f.Received.Bytes), 0), received, "receiver")
	for _, want := range []string{
		"\n" + separator + "\n",
		"Goodput client→server: " + strings.TrimSpace(received) + " (",
		"[  1] client: MSS size 8948 bytes (MTU 9000 bytes)\n",
		"[  1] server: MSS size 8948 bytes (MTU unknown)\n",
		"[  1] Read lengths occurring in more than 5% of reads:\n",
		"[  1]   1368 bytes read 60 times (6.0%)\n",
		"[  1]  65536 bytes read 200 times (20.0%)\n",
		"[  1] 131072 bytes read 700 times (70.0%)\n",
		"CPU Utilization: local/client/sender 99.1% (2.2%u/96.9%s), remote/server/receiver 38.1% (5.7%u/32.4%s)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, notWant := range []string{"  100 bytes read", "ended early", "sender TCP"} {
		if strings.Contains(out, notWant) {
			t.Errorf("summary has %q:\n%s", notWant, out)
		}
	}
}

func TestTextSummaryNotes(t *testing.T) {
	tests := []struct {
		name    string
		change  func(r *result.Result)
		opt     Options
		want    []string
		notWant []string
	}{
		{
			name:   "other tests share the server's CPU figure",
			change: func(r *result.Result) { r.Remote.ConcurrentTests = 2 },
			want:   []string{"remote/server/receiver 38.1% (5.7%u/32.4%s) (server process total; 2 other tests ran at the same time)\n"},
		},
		{
			name:   "one other test",
			change: func(r *result.Result) { r.Remote.ConcurrentTests = 1 },
			want:   []string{"(server process total; 1 other test ran at the same time)"},
		},
		{
			name: "test cut short",
			change: func(r *result.Result) {
				r.Error = "control connection lost"
				r.Remote.Error = "client went away"
			},
			want: []string{"wireperf: test ended early: control connection lost\n", "wireperf: the server reported: client went away\n"},
		},
		{
			name: "receiver's report missing",
			change: func(r *result.Result) {
				r.Remote.Streams = nil
				r.Remote.Intervals = nil
			},
			want:    []string{"receiver (no report)", "Goodput client→server: unknown, the receiver sent no report"},
			notWant: []string{"Read lengths", "server: MSS"},
		},
		{
			name:   "read counts without a call count",
			change: func(r *result.Result) { r.Remote.Streams[0].Calls = 0 },
			want:   []string{"1368 bytes read 60 times (6.0%)"},
		},
		{
			name: "no read length above 5%",
			change: func(r *result.Result) {
				r.Remote.Streams[0].ReadLengths = []result.ReadLength{{Length: 1, Count: 1}, {Length: 2, Count: 1}}
				r.Remote.Streams[0].Calls = 100
			},
			notWant: []string{"Read lengths"},
		},
		{
			name:   "verbose",
			opt:    Options{Verbose: true},
			change: func(*result.Result) {},
			want: []string{
				"Test: TCP, 1 stream, 131072-byte writes, 10s, socket buffers 2097152 bytes requested, tos 0\n",
				"[  1] sender TCP: 6 retransmits, RTT min/mean/max 37us/38us/39us, max cwnd 898 KBytes, max send window 2.63 MBytes, congestion control bbr\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := forwardResult()
			tt.change(r)
			out := renderText(t, r, tt.opt)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestTextMissingSide covers an interval only one end reported, as when
// time ran out: the other side shows placeholders.
func TestTextMissingSide(t *testing.T) {
	tests := []struct {
		name      string
		r         *result.Result
		wantLeft  []string // fields after the interval
		wantRight []string
	}{
		{"receiver missing", forwardResult(), nil, []string{"-", "-"}},
		{"sender missing", reverseResult(), []string{"-", "-", "-", "-", "-"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The server's last interval never arrived.
			tt.r.Remote.Intervals = tt.r.Remote.Intervals[:intervalsN-1]
			rows := tt.r.IntervalRows()
			var b bytes.Buffer
			if err := (&Text{W: &b}).Interval(tt.r, rows[len(rows)-1]); err != nil {
				t.Fatal(err)
			}
			left, right := sides(t, findLine(t, b.String(), "[  1]   2.00-3.00   sec"))
			leftFields := strings.Fields(left)[4:] // after "[", "1]", the span and "sec"
			if tt.wantLeft != nil && strings.Join(leftFields, " ") != strings.Join(tt.wantLeft, " ") {
				t.Errorf("sender side %q; want fields %q", left, tt.wantLeft)
			}
			if tt.wantRight != nil && strings.Join(strings.Fields(right), " ") != strings.Join(tt.wantRight, " ") {
				t.Errorf("receiver side %q; want fields %q", right, tt.wantRight)
			}
			if tt.wantLeft == nil && strings.Contains(left, " - ") {
				t.Errorf("sender side %q has placeholders; the sender reported", left)
			}
			if tt.wantRight == nil && strings.TrimSpace(right) == "-  -" {
				t.Errorf("receiver side %q has placeholders; the receiver reported", right)
			}
		})
	}
}

func TestTextLayout(t *testing.T) {
	tests := []struct {
		name           string
		r              *result.Result
		opt            Options
		wantSeparators int
	}{
		// iperf3 sets groups of lines apart, and always the end block.
		{"one line per interval", forwardResult(), Options{}, 1},
		{"several lines per interval", parallelResult(), Options{}, intervalsN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderText(t, tt.r, tt.opt)
			if n := strings.Count(out, intervalColumns(false)); n != 1 {
				t.Errorf("interval column header written %d times; want once:\n%s", n, out)
			}
			if n := strings.Count(out, separator); n != tt.wantSeparators {
				t.Errorf("%d separators; want %d:\n%s", n, tt.wantSeparators, out)
			}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if strings.HasSuffix(line, " ") {
					t.Errorf("line %q ends in blanks", line)
				}
			}
		})
	}
}

func TestTextOmitted(t *testing.T) {
	r := parallelResult()
	rows := r.IntervalRows()
	rows[0].Omitted = true
	var b bytes.Buffer
	tx := &Text{W: &b}
	for _, row := range rows[:2] {
		if err := tx.Interval(r, row); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range strings.Split(b.String(), "\n") {
		omitted := strings.HasSuffix(line, "  (omitted)")
		if strings.Contains(line, "0.00-1.00") != omitted {
			t.Errorf("line %q: omitted mark %v; want it on the first interval's lines only", line, omitted)
		}
	}
}

func TestTextTitle(t *testing.T) {
	tests := []struct {
		name       string
		specTitle  string
		optTitle   string
		wantPrefix string
	}{
		{"from the spec", "mytitle", "", "mytitle:  "},
		{"option wins", "mytitle", "other", "other:  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parallelResult()
			r.Spec.Title = tt.specTitle
			r.Error = "cut short"
			out := renderText(t, r, Options{Title: tt.optTitle})
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) < 20 {
				t.Fatalf("only %d lines:\n%s", len(lines), out)
			}
			for _, line := range lines {
				if !strings.HasPrefix(line, tt.wantPrefix) {
					t.Errorf("line %q lacks the title prefix %q", line, tt.wantPrefix)
				}
			}
		})
	}
}

func TestTextFormatOption(t *testing.T) {
	tests := []struct {
		f                units.Format
		want, wantAbsent string
	}{
		{'m', "Mbits/sec", "Gbits/sec"},
		{'M', "MBytes/sec", "bits/sec"},
		{'k', "KBytes  ", "GBytes"}, // transfers in the unit of the same scale
	}
	for _, tt := range tests {
		t.Run(tt.f.String(), func(t *testing.T) {
			out := renderText(t, forwardResult(), Options{Format: tt.f})
			line := findLine(t, out, "[  1]   0.00-1.00   sec")
			if !strings.Contains(line, tt.want) || strings.Contains(line, tt.wantAbsent) {
				t.Errorf("-f %s: %q; want %q and no %q", tt.f, line, tt.want, tt.wantAbsent)
			}
		})
	}
}

func TestRTT(t *testing.T) {
	tests := []struct {
		us   uint32
		want string
	}{
		{0, "0us"},
		{45, "45us"},
		{999, "999us"},
		{1000, "1.00ms"},
		{12345, "12.35ms"},
		{215000, "215.00ms"},
	}
	for _, tt := range tests {
		if got := rtt(tt.us); got != tt.want {
			t.Errorf("rtt(%d) = %q; want %q", tt.us, got, tt.want)
		}
	}
}

// TestTextGoodputDrain: the goodput line says how long the receiver went
// on receiving after the sender stopped, and says nothing of a drain it
// did not have.
func TestTextGoodputDrain(t *testing.T) {
	r := forwardResult()
	if out := renderText(t, r, Options{}); strings.Contains(out, "after the sender stopped") {
		t.Errorf("a drain without one:\n%s", out)
	}
	endOf(r, result.RoleServer).Streams[0].Drain = 0.334
	out := renderText(t, r, Options{})
	findLine(t, out, "Goodput client→server: ", "the last 0.33 s after the sender stopped")
}

// TestTextBufferUnits: one line, one unit scale: an autotuned send buffer
// and a requested receive buffer read alike.
func TestTextBufferUnits(t *testing.T) {
	got := describeBuffers(result.Socket{SndBufGranted: 212992, RcvBufRequested: 8 << 20, RcvBufGranted: 8 << 20}, false, true)
	if want := "send 208 KBytes (autotuned), receive 8.00 MBytes"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestTextBufferCapped: -w 8M where rmem_max is 4 MiB is granted what -w
// 4M is (twice the limit), and the line says the limit capped it; a UDP
// socket that asked for nothing has the default, never "autotuned".
func TestTextBufferCapped(t *testing.T) {
	got := describeBuffers(result.Socket{SndBufRequested: 8 << 20, SndBufGranted: 8 << 20, SndBufCap: 4 << 20,
		RcvBufRequested: 8 << 20, RcvBufGranted: 8 << 20, RcvBufCap: 4 << 20}, false, true)
	for _, want := range []string{"requested 8.00 MBytes, capped by net.core.wmem_max at 4.00 MBytes",
		"capped by net.core.rmem_max at 4.00 MBytes: the same as asking for 4.00 MBytes"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	got = describeBuffers(result.Socket{SndBufGranted: 212992, RcvBufGranted: 212992}, true, false)
	if strings.Contains(got, "autotuned") || !strings.Contains(got, "208 KBytes (default)") {
		t.Errorf("UDP buffers: %q", got)
	}
}

// TestServerOutputText: the server's record, as an iperf3 client gets it
// with --get-server-output, says it accepted a connection; it connected
// to nothing.
func TestServerOutputText(t *testing.T) {
	r := forwardResult()
	out, isJSON := ServerOutput(true)(r, 0)
	if isJSON {
		t.Fatal("text asked, JSON given")
	}
	if !strings.HasPrefix(string(out), "Accepted connection from 127.0.0.1\n") || strings.Contains(string(out), "Connecting to") {
		t.Errorf("server output begins %q", strings.SplitN(string(out), "\n", 2)[0])
	}
}

// TestNoRateOverMicroseconds: a span of microseconds shows its bytes but
// no rate.
func TestNoRateOverMicroseconds(t *testing.T) {
	if _, rate := amounts(1<<20, 20e-6, 0); strings.TrimSpace(rate) != missing {
		t.Errorf("1 MiB over 20 µs reads %q", rate)
	}
	if _, rate := amounts(1<<20, 0.5, 0); strings.TrimSpace(rate) == missing {
		t.Error("no rate over half a second")
	}
}

// Without -w, a UDP socket's request is wireperf's own default: its
// capped buffer reads without a WARNING, and nothing speaks of -w.
func TestTextUDPBuffersWithoutW(t *testing.T) {
	r := udpForwardResult()
	r.Spec.Window = 0
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		for i := range e.Streams {
			e.Streams[i].Socket = result.Socket{SndBufGranted: 212992, RcvBufRequested: 8 << 20, RcvBufGranted: 425984, RcvBufCap: 212992}
		}
	}
	var b strings.Builder
	if err := (&Text{W: &b}).Header(HeaderFromResult(r)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "WARNING") || strings.Contains(out, "-w") {
		t.Errorf("no -w given, yet:\n%s", out)
	}
	if !strings.Contains(out, "receive 416 KBytes (wireperf's default request of 8.00 MBytes, capped by net.core.rmem_max at 208 KBytes)") {
		t.Errorf("the capped default request is not shown:\n%s", out)
	}
	r.Spec.Window = 8 << 20
	b.Reset()
	if err := (&Text{W: &b}).Header(HeaderFromResult(r)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "WARNING: requested 8.00 MBytes") || !strings.Contains(b.String(), "setting -w turns off autotuning") {
		t.Errorf("-w 8M's request is not warned of:\n%s", b.String())
	}
}

// The read lengths' heading never stands alone: over histograms of every
// shape (none above 5%, one just above, the call count below or above
// the histogram's sum, at most tcpflow's 16 lengths), every heading is
// followed by at least one length of its stream, and a length is listed
// exactly when its share is above 5%.
func TestReadLengthsHeadingHasEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 9))
	for i := range 2000 {
		r := forwardResult()
		st := &r.Remote.Streams[0]
		n := rng.IntN(17)
		st.ReadLengths = nil
		var sum int64
		for k := range n {
			c := rng.Int64N(100)
			st.ReadLengths = append(st.ReadLengths, result.ReadLength{Length: 100 + k, Count: c})
			sum += c
		}
		st.Calls = []int64{0, sum, sum + rng.Int64N(2000), max(sum-rng.Int64N(50), 0)}[rng.IntN(4)]
		out := renderText(t, r, Options{})
		lines := strings.Split(out, "\n")
		listed := 0
		for j, l := range lines {
			if strings.Contains(l, "Read lengths occurring") && (j+1 == len(lines) || !strings.Contains(lines[j+1], "bytes read")) {
				t.Fatalf("case %d: the heading without an entry (calls %d, lengths %v):\n%s", i, st.Calls, st.ReadLengths, out)
			}
			if strings.Contains(l, "bytes read") {
				listed++
			}
		}
		total := max(st.Calls, sum) // the histogram covers -O's start, Calls not
		want := 0
		for _, rl := range st.ReadLengths {
			if total > 0 && float64(rl.Count) > 0.05*float64(total) {
				want++
			}
		}
		if listed != want {
			t.Fatalf("case %d: %d lengths listed, want the %d above 5%% of %d reads (%v):\n%s", i, listed, want, total, st.ReadLengths, out)
		}
	}
}

// With -O the stream's calls leave the omitted start out while the
// read-length histogram counts it: the shares are of the larger, never
// above 100% (a loopback -O 1 test printed "read 5789 times (114.1%)").
func TestReadLengthSharesWithOmit(t *testing.T) {
	r := forwardResult()
	st := &r.Remote.Streams[0]
	st.ReadLengths = []result.ReadLength{{Length: 1 << 20, Count: 5789}}
	st.Calls = 5074 // the reads after the omitted start
	out := renderText(t, r, Options{})
	if !strings.Contains(out, "1048576 bytes read 5789 times (100.0%)") {
		t.Errorf("the share of the only read length is not 100%%:\n%s", out)
	}
	if got := readShares(st); len(got) != 1 || got[0].Percent != 100 {
		t.Errorf("JSON's read shares %+v, want 100%%", got)
	}
}
