package emit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

const udpIntervalHeader = "[ ID] Interval           Transfer     Bitrate         Total Datagrams | Received     Goodput         Jitter    Lost/Total Datagrams"

var udpResults = []struct {
	name  string
	build func() *result.Result
}{
	{"forward", udpForwardResult},
	{"reverse", udpReverseResult},
	{"parallel", udpParallelResult},
	{"bidir", udpBidirResult},
	{"gro", udpGROResult},
}

// wantJitter is how a receiver's jitter should print.
func wantJitter(u *result.UDP) string {
	if u.JitterSamples == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f ms", u.JitterMs)
}

// TestTextUDPInterval checks every flow line of every interval: the
// sender's transfer, bitrate and datagrams left of the bar, the
// receiver's transfer, goodput, jitter and lost/total right of it.
func TestTextUDPInterval(t *testing.T) {
	for _, tt := range udpResults {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.build()
			out := renderText(t, r, Options{})
			bidir := r.Spec.Bidir
			for _, row := range r.IntervalRows() {
				for _, f := range row.Flows {
					line := findLine(t, out, flowTag(f.ID, f.SenderRole, bidir)+timeSpanText(row), "|")
					left, right := sides(t, line)
					sent := f.Sent.UDP
					wantLeft := units.FormatTransfer(float64(f.Sent.Bytes), 0) + "  " + units.FormatRate(float64(f.Sent.Bytes)*8, 0) +
						"  " + strconv.FormatInt(sent.Sent, 10)
					if !strings.HasSuffix(strings.TrimRight(left, " "), wantLeft) {
						t.Errorf("flow %d sender side %q; want it to end %q", f.ID, left, wantLeft)
					}
					u := f.Received.UDP
					pct := 100 * float64(u.Lost) / float64(u.Expected)
					wantRight := []string{
						units.FormatTransfer(float64(f.Received.Bytes), 0), units.FormatRate(float64(f.Received.Bytes)*8, 0),
						wantJitter(u), fmt.Sprintf("%d/%d (", u.Lost, u.Expected),
					}
					for _, w := range wantRight {
						if !strings.Contains(right, w) {
							t.Errorf("flow %d receiver side %q lacks %q", f.ID, right, w)
						}
					}
					// The percent, read back, is the loss to two decimals.
					_, p, _ := strings.Cut(right, " (")
					got, err := strconv.ParseFloat(strings.TrimSuffix(p, "%)"), 64)
					if err != nil || got-pct > 0.005 || pct-got > 0.005 {
						t.Errorf("flow %d loss %q; want %.4f%%", f.ID, p, pct)
					}
				}
			}
			if strings.Contains(out, "Retr") || strings.Contains(out, "Cwnd") || strings.Contains(out, "MSS") {
				t.Errorf("UDP output has TCP figures:\n%s", out)
			}
		})
	}
}

func timeSpanText(row result.IntervalRow) string { return " " + timeSpan(row.Start, row.End) }

// TestTextUDPColumns checks that the column headers sit over their
// figures, and lines end without blanks.
func TestTextUDPColumns(t *testing.T) {
	for _, tt := range udpResults {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.build()
			out := renderText(t, r, Options{})
			bidir := r.Spec.Bidir
			header := udpIntervalColumns(bidir)
			if !bidir && header != udpIntervalHeader {
				t.Errorf("interval header\n%q; want\n%q", header, udpIntervalHeader)
			}
			if n := strings.Count(out, header+"\n"); n != 1 {
				t.Errorf("interval header written %d times; want once:\n%s", n, out)
			}
			bar := strings.Index(header, " | ")
			jitterCol, lostCol := strings.Index(header, "Jitter"), strings.Index(header, "Lost/Total")
			sentCol := strings.Index(header, "Total Datagrams")
			for _, row := range r.IntervalRows() {
				for _, f := range row.Flows {
					line := findLine(t, out, flowTag(f.ID, f.SenderRole, bidir)+timeSpanText(row), "|")
					if got := strings.Index(line, " | "); got != bar {
						t.Errorf("bar at column %d of %q; want %d as in the header", got, line, bar)
					}
					cells := map[int]string{
						sentCol:   strconv.FormatInt(f.Sent.UDP.Sent, 10),
						jitterCol: wantJitter(f.Received.UDP),
						lostCol:   fmt.Sprintf("%d/", f.Received.UDP.Lost),
					}
					for col, cell := range cells {
						if !strings.HasPrefix(line[col:], cell) {
							t.Errorf("%q: %q not under its header at column %d", line, cell, col)
						}
					}
				}
			}
			total := udpTotalColumns(bidir)
			jitterCol, lostCol = strings.Index(total, "Jitter"), strings.Index(total, "Lost/Total")
			for _, d := range r.Directions() {
				for _, f := range d.Flows {
					line := findLine(t, out, flowTag(f.ID, d.SenderRole, bidir)+" "+timeSpan(f.Received.Start, f.Received.End), "receiver")
					if !strings.HasPrefix(line[jitterCol:], wantJitter(f.Received.UDP)) || !strings.HasPrefix(line[lostCol:], fmt.Sprintf("%d/", f.Received.UDP.Lost)) {
						t.Errorf("summary line %q: jitter and lost not under %q", line, total)
					}
				}
			}
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if strings.HasSuffix(line, " ") {
					t.Errorf("line %q ends in blanks", line)
				}
			}
		})
	}
}

// TestTextUDPNotes checks the out-of-order line under a flow: only in
// intervals where its receiver saw re-ordering, duplicates or late ones.
func TestTextUDPNotes(t *testing.T) {
	out := renderText(t, udpParallelResult(), Options{})
	want := []string{
		"[  1]   1.00-2.00   sec  12 datagrams received out-of-order (max extent 3), 2 duplicates, 1 datagram late (counted lost, then arrived)\n",
		"[  1]   2.00-3.00   sec  5 datagrams received out-of-order (max extent 7)\n",
		"[  2]   0.00-1.00   sec  1 datagram received out-of-order (max extent 1)\n",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "out-of-order"); n != len(want) {
		t.Errorf("%d out-of-order lines; want %d:\n%s", n, len(want), out)
	}
	// The note follows its flow's line.
	if !strings.Contains(out, "(1%)\n[  1]   1.00-2.00   sec  12 datagrams") {
		t.Errorf("the note does not follow flow 1's line:\n%s", out)
	}
	// A note does not make a one-flow interval a group of its own.
	r := udpForwardResult()
	r.Remote.Intervals[1].Streams[0].UDP.Duplicates = 3
	out = renderText(t, r, Options{})
	findLine(t, out, "[  1]   1.00-2.00   sec  3 duplicates")
	if n := strings.Count(out, separator); n != 1 {
		t.Errorf("%d separators; want only the summary's:\n%s", n, out)
	}
	if strings.Contains(renderText(t, udpForwardResult(), Options{}), "out-of-order") {
		t.Error("out-of-order line without re-ordering")
	}
}

// TestTextUDPSums checks the [SUM] lines of -P 2: counts add up, jitter
// is the flows' mean weighted by their samples.
func TestTextUDPSums(t *testing.T) {
	r := udpParallelResult()
	out := renderText(t, r, Options{})
	for _, row := range r.IntervalRows() {
		var sent, expected, lost, samples int64
		var weighted float64
		for _, f := range row.Flows {
			sent += f.Sent.UDP.Sent
			u := f.Received.UDP
			expected += u.Expected
			lost += u.Lost
			samples += u.JitterSamples
			weighted += u.JitterMs * float64(u.JitterSamples)
		}
		line := findLine(t, out, "[SUM]"+timeSpanText(row), "|")
		left, right := sides(t, line)
		if f := strings.Fields(left); f[len(f)-1] != strconv.FormatInt(sent, 10) {
			t.Errorf("[SUM] %q: want %d datagrams sent", left, sent)
		}
		for _, w := range []string{fmt.Sprintf("%.3f ms", weighted/float64(samples)), fmt.Sprintf("  %d/%d (", lost, expected)} {
			if !strings.Contains(right, w) {
				t.Errorf("[SUM] receiver side %q lacks %q", right, w)
			}
		}
	}
	// Worked by hand for the first and last intervals.
	findLine(t, out, "[SUM]   0.00-1.00   sec", "6500 ", "0.442 ms  10/6500 (0.15%)")
	findLine(t, out, "[SUM]   2.00-3.00   sec", "6544 ", "1.288 ms  4950/6544 (75.64%)")
	// The summary's sums come from the stream totals.
	findLine(t, out, "[SUM]   0.00-3.00   sec", "19566 sent", "sender")
	findLine(t, out, "[SUM]   0.00-3.00   sec", "0.883 ms  5000/19566 (25.55%)", "receiver")
	findLine(t, out, "[SUM] receiver: 14,566 datagrams received, jitter 0.883 ms, lost 5,000/19,566 (25.55%), 1 late (arrived after 2s), 2 duplicates, 18 reordered (max extent 7)")
	findLine(t, out, "[SUM] sender: 19,566 datagrams sent, 4 send errors")
	if n := strings.Count(out, "[SUM]"); n != intervalsN+4 {
		t.Errorf("%d [SUM] lines; want %d", n, intervalsN+4)
	}
	if n := strings.Count(renderText(t, udpBidirResult(), Options{}), "[SUM]"); n != 0 {
		t.Errorf("%d [SUM] lines with one flow each way; want none", n)
	}
}

func TestTextUDPSummary(t *testing.T) {
	r := udpParallelResult()
	out := renderText(t, r, Options{})
	d := r.Directions()[0]
	for _, f := range d.Flows {
		tag := flowTag(f.ID, f.SenderRole, false)
		s, u := f.Sent.UDP, f.Received.UDP
		findLine(t, out, tag+" "+timeSpan(f.Sent.Start, f.Sent.End), units.FormatTransfer(float64(f.Sent.Bytes), 0),
			fmt.Sprintf("  %d sent", s.Sent), "sender")
		findLine(t, out, tag+" "+timeSpan(f.Received.Start, f.Received.End), units.FormatTransfer(float64(f.Received.Bytes), 0),
			fmt.Sprintf("%.3f ms  %d/%d (", u.JitterMs, u.Lost, u.Expected), "receiver")
		findLine(t, out, tag+" receiver: "+units.Thousands(u.Received)+" datagrams received, "+fmt.Sprintf("jitter %.3f ms, lost %s/%s (",
			u.JitterMs, units.Thousands(u.Lost), units.Thousands(u.Expected)))
	}
	for _, want := range []string{
		"[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n",
		"[  1] sender: 12,033 datagrams sent, 4 send errors; pacing: mean 250.2 µs, error p50 0.8 µs p99 4.1 µs max 9.0 µs (target 250.0 µs)\n",
		"[  2] sender: 7,533 datagrams sent; pacing: mean 400.2 µs, error p50 0.8 µs p99 4.1 µs",
		"[  1] receiver: 8,993 datagrams received, jitter 0.500 ms, lost 3,040/12,033 (25.26%), 1 late (arrived after 2s), 2 duplicates, 17 reordered (max extent 7)\n",
		"[  2] receiver: 5,573 datagrams received, jitter 1.500 ms, lost 1,960/7,533 (26.02%), 0 late (arrived after 2s), 0 duplicates, 1 reordered (max extent 1)\n",
		"[  1] IPDV (delay variation between consecutive datagrams): min -40.0 µs, p50 0.2 µs, p90 3.2 µs, p99 12.0 µs, p99.9 40.0 µs, max 80.0 µs (8,992 samples)\n",
		"[  1] PDV = relative one-way delay (OWD − min OWD; clocks not compared): min 0.0 µs, p50 8.0 µs, p90 20.0 µs, p99 35.5 µs, p99.9 60.0 µs, max 1.50 ms (8,993 samples)\n",
		"[  1] timestamps: kernel; jitter from kernel timestamps (8,990 samples)\n",
		"Goodput client→server: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// The verdict: 5,000 lost; the server's socket buffer dropped 3,000,
	// the client's queue 10 − 4 refused sends = 6, and no counter explains the rest.
	verdict := "Loss client→server: of 5,000 lost datagrams, 3,000 were dropped by the receiving host's socket buffer (RcvbufErrors), " +
		"the sending host dropped 6 (SndbufErrors/ENOBUFS), and 1,994 are not explained by either host's counters; raise -w or the receiver's net.core.rmem_max; " +
		"the sender outran its own socket buffer or NIC queue\n"
	if !strings.Contains(out, "[SUM]   0.00-3.00   sec  20.1 MBytes  56.2 Mbits/sec  0.883 ms  5000/19566 (25.55%)   receiver\n"+verdict) {
		t.Errorf("summary lacks the verdict right after the receiver lines:\n%s", out)
	}
	if got, want := strings.Count(out, "Loss "), 1; got != want {
		t.Errorf("%d verdicts; want %d", got, want)
	}
	for _, notWant := range []string{"0.000 ms", "MSS", "TCP", "Retr"} {
		if strings.Contains(out, notWant) {
			t.Errorf("summary has %q:\n%s", notWant, out)
		}
	}
}

// TestTextUDPVerdicts checks the loss verdict of each direction against
// the attribution of the right hosts' counters.
func TestTextUDPVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		r      *result.Result
		change func(r *result.Result)
		want   []string
	}{
		{
			name: "no loss",
			r:    udpForwardResult(),
			want: []string{"Loss client→server: no datagrams were lost\n"},
		},
		{
			name: "reverse, lost in the network",
			r:    udpReverseResult(),
			want: []string{"Loss server→client: of 10 lost datagrams, none is explained by either host's counters: neither host counted a drop\n"},
		},
		{
			// The server received client→server and holds its RcvbufErrors;
			// the client received server→client and dropped nothing.
			name: "bidir, each direction its own hosts",
			r:    udpBidirResult(),
			want: []string{
				"Loss client→server: of 120 lost datagrams, 120 were dropped by the receiving host's socket buffer (RcvbufErrors): raise -w or the receiver's net.core.rmem_max\n",
				"Loss server→client: of 5 lost datagrams, none is explained by either host's counters: neither host counted a drop\n",
			},
		},
		{
			name:   "other tests at the same time",
			r:      udpReverseResult(),
			change: func(r *result.Result) { r.Remote.ConcurrentTests = 2 },
			want:   []string{"neither host counted a drop (approximate: the hosts' UDP counters are host-wide and 2 other tests ran at the same time)\n"},
		},
		{
			name:   "receiver without counters",
			r:      udpReverseResult(),
			change: func(r *result.Result) { r.Local.UDPCounters = nil },
			want:   []string{"Loss server→client: of 10 lost datagrams, where they were dropped is unknown"},
		},
		{
			name: "receiver's report missing",
			r:    udpForwardResult(),
			change: func(r *result.Result) {
				r.Remote.Streams, r.Remote.Intervals = nil, nil
			},
			want: []string{"Loss client→server: unknown, the receiver sent no report\n", "receiver (no report)\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.change != nil {
				tt.change(tt.r)
			}
			out := renderText(t, tt.r, Options{})
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if got := strings.Count(out, "\nLoss "); got != len(tt.r.Directions()) {
				t.Errorf("%d verdicts; want one per direction (%d):\n%s", got, len(tt.r.Directions()), out)
			}
			for _, d := range tt.r.Directions() {
				_, received := directionUDP(d)
				if received == nil {
					// The interval lines show placeholders on the receiver's side.
					_, right := sides(t, findLine(t, out, flowTag(d.Flows[0].ID, d.SenderRole, tt.r.Spec.Bidir)+"   0.00-1.00   sec"))
					if strings.Join(strings.Fields(right), " ") != "- - - -" {
						t.Errorf("receiver side %q; want placeholders", right)
					}
					continue
				}
				a := lossOf(tt.r, d)
				if !strings.Contains(out, "Loss "+d.Label()+": "+a.Verdict+"\n") {
					t.Errorf("no verdict %q:\n%s", a.Verdict, out)
				}
			}
		})
	}
}

// TestTextUDPJitterUnknown checks that a receiver without datagram pairs
// prints "n/a", never a made-up 0.000.
func TestTextUDPJitterUnknown(t *testing.T) {
	r := udpBidirResult()
	out := renderText(t, r, Options{})
	for _, row := range r.IntervalRows() {
		line := findLine(t, out, "[  2][RX-C]"+timeSpanText(row))
		if _, right := sides(t, line); !strings.Contains(right, "  n/a  ") {
			t.Errorf("flow 2 %q; want jitter n/a", right)
		}
	}
	for _, want := range []string{
		"[  2][RX-C]   0.00-3.00   sec  1.70 MBytes  4.74 Mbits/sec  n/a       5/1233 (0.41%)        receiver\n",
		"[  2][RX-C] receiver: 1,228 datagrams received, jitter n/a, lost 5/1,233 (0.41%)",
		"[  2][RX-C] timestamps: kernel; jitter n/a (no datagram pairs to compare)\n",
		"[  1][TX-C] timestamps: kernel; jitter from kernel timestamps (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0.000 ms") {
		t.Errorf("output has a made-up 0.000 ms:\n%s", out)
	}
	// A sum of flows that all lack jitter lacks it too.
	if got := jitterCell(sumUDP([]*result.UDP{{Lost: 1}, {Received: 3}})); got != "n/a" {
		t.Errorf("jitter of a sum without samples = %q; want n/a", got)
	}
}

// TestTextUDPDelays covers GRO timestamps, absolute and relative OWD.
func TestTextUDPDelays(t *testing.T) {
	out := renderText(t, udpGROResult(), Options{})
	for _, want := range []string{
		"[  1] timestamps: kernel; jitter from kernel timestamps per GRO batch (15,030 samples, 411 GRO batches)\n",
		"[  1] PDV (delay − min delay): min 0.0 µs, p50 8.0 µs",
		"[  1] one-way delay (clock offset -1.23 ms ± 45.0 µs): min 50.0 µs, p50 60.0 µs, p90 70.0 µs, p99 90.0 µs, p99.9 120.0 µs, max 150.0 µs (15,033 samples)\n",
		"Loss client→server: no datagrams were lost\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "relative one-way delay") {
		t.Errorf("absolute OWD also printed as relative:\n%s", out)
	}

	// Relative OWD that is not the PDV gets its own line; without any
	// delay figures there are no delay lines.
	r := udpForwardResult()
	u := r.Remote.Streams[0].UDP
	u.PDV = nil
	u.OWD.Relative.P50 = 77
	u.JitterMethod = "user-space clock"
	out = renderText(t, r, Options{})
	findLine(t, out, "[  1] relative one-way delay (OWD − min OWD; clocks not compared): min 0.0 µs, p50 77.0 µs")
	findLine(t, out, "[  1] timestamps: kernel; jitter from user-space clock (")
	if strings.Contains(out, "] PDV") {
		t.Errorf("PDV line without PDV:\n%s", out)
	}
	u.IPDV, u.OWD = nil, nil
	out = renderText(t, r, Options{})
	if strings.Contains(out, "IPDV") || strings.Contains(out, "one-way delay") {
		t.Errorf("delay lines without delay figures:\n%s", out)
	}
}

func TestTextUDPHeader(t *testing.T) {
	r := udpParallelResult()
	var b bytes.Buffer
	if err := (&Text{W: &b, Opt: Options{Verbose: true}}).Header(HeaderFromResult(r)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Test: UDP, 2 streams, 1448-byte datagrams, 10s, target 10.0 Mbits/sec, lost after 2s, tos 0\n",
		"Client UDP buffer size: send 208 KBytes (default), receive 208 KBytes (default)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("header lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "TCP") {
		t.Errorf("UDP header speaks of TCP:\n%s", b.String())
	}
}

func TestLossPercent(t *testing.T) {
	tests := []struct {
		lost, total int64
		want        string
	}{
		{0, 0, "0%"},
		{0, 100, "0%"},
		{1, 1000000, "<0.01%"},
		{10, 2500, "0.4%"},
		{3040, 12033, "25.26%"},
		{40, 4011, "1%"},
		{5, 5, "100%"},
	}
	for _, tt := range tests {
		if got := lossPercent(tt.lost, tt.total); got != tt.want {
			t.Errorf("lossPercent(%d, %d) = %q; want %q", tt.lost, tt.total, got, tt.want)
		}
	}
}

// TestTextUDPProvisionalAndInvalid: a row printed while its loss could
// still shrink is marked, with a note under the summary; the same rows
// replayed once settled are not. Datagrams that were not the sender's
// get a line.
func TestTextUDPProvisionalAndInvalid(t *testing.T) {
	r := udpForwardResult()
	recv := endOf(r, result.RoleServer)
	row0 := recv.Intervals[0].Streams[0].UDP
	row0.Provisional = true
	total := recv.Streams[0].UDP
	total.Invalid = 2
	recv.Streams[0].UDPSettlements = []result.UDPSettlement{{Index: 0, Lost: -1}}
	total.Lost--
	total.Expected--

	var live bytes.Buffer
	tx := &Text{W: &live}
	if err := tx.Header(HeaderFromResult(r)); err != nil {
		t.Fatal(err)
	}
	roles := r.SenderRoles()
	for i := range r.Local.Intervals { // as the merger shows them, unsettled
		if err := tx.Interval(r, result.JoinInterval(&r.Local.Intervals[i], &r.Remote.Intervals[i], roles)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Summary(r); err != nil {
		t.Fatal(err)
	}
	out := live.String()
	findLine(t, out, "[  1]   0.00-1.00", fmt.Sprintf("%d/%d (", row0.Lost, row0.Expected), ")*")
	for _, want := range []string{
		"* interval loss printed before the late threshold (2s) had passed",
		"[  1] receiver: 2 datagrams not counted: not the sender's",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}

	settled := renderText(t, r, Options{})
	findLine(t, settled, "[  1]   0.00-1.00", fmt.Sprintf("%d/%d (", row0.Lost-1, row0.Expected-1))
	if strings.Contains(settled, ")*") || strings.Contains(settled, "interval loss printed before") {
		t.Errorf("settled rows still marked provisional:\n%s", settled)
	}
}

func TestScheduleLine(t *testing.T) {
	f := units.Format('a')
	tests := []struct {
		s    *result.Schedule
		want string
	}{
		{nil, ""},
		{&result.Schedule{RequestedBps: 300e6, SentBps: 299e6, CPUPercent: 20}, ""},
		{&result.Schedule{RequestedBps: 300e6, SentBps: 192e6, CPUPercent: 99, Limit: "CPU-bound"},
			"sender: 192 Mbits/sec of 300 Mbits/sec requested (64%): CPU-bound (99% of a core)"},
		{&result.Schedule{RequestedBps: 1e9, SentBps: 500e6, BufferFull: 1234, WrittenOff: 7, Limit: "socket buffer full"},
			"sender: 500 Mbits/sec of 1.00 Gbits/sec requested (50%): the socket buffer was full (1,234 sends refused: ENOBUFS/EAGAIN); 7 datagrams written off the schedule"},
		{&result.Schedule{RequestedBps: 1e9, SentBps: 900e6, Sends: 10, SlowSends: 3, Limit: "slow send calls"},
			"sender: 900 Mbits/sec of 1.00 Gbits/sec requested (90%): slow send calls (3 of 10 took longer than their slot)"},
		{&result.Schedule{Spin: true, CPUPercent: 97}, "sender: spinning to hold each gap (--spin) cost 97% of a core"},
		{&result.Schedule{RequestedBps: 100e6, SentBps: 80e6, Spin: true, CPUPercent: 97, Limit: "unknown"},
			"sender: 80.0 Mbits/sec of 100 Mbits/sec requested (80%): cause unknown (97% of a core, no refused or slow sends); spinning (--spin) cost 97% of a core"},
	}
	for _, tc := range tests {
		if got := scheduleLine(tc.s, f); got != tc.want {
			t.Errorf("scheduleLine(%+v) =\n%q, want\n%q", tc.s, got, tc.want)
		}
	}
}

func TestReceiverCPULine(t *testing.T) {
	r := &result.Result{
		Local:  result.End{Role: result.RoleClient, CPU: result.CPU{TotalPercent: 40}},
		Remote: result.End{Role: result.RoleServer, CPU: result.CPU{TotalPercent: 97}},
	}
	up := result.Direction{SenderRole: result.RoleClient}
	want := "receiver: CPU-bound (97% of a core): it may have dropped datagrams itself, in its socket buffer"
	if got := receiverCPULine(r, up, false); got != want {
		t.Errorf("client→server: %q, want %q", got, want)
	}
	if got := receiverCPULine(r, result.Direction{SenderRole: result.RoleServer}, false); got != "" {
		t.Errorf("server→client, the client's receiver at 40%%: %q", got)
	}
	if got := receiverCPULine(r, up, true); got != "" {
		t.Errorf("bidirectional: %q", got)
	}
}
