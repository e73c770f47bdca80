package logimport

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/loopback"

	"github.com/wireperf/wireperf/internal/archive"
)

func importFixture(t *testing.T, name string) []*archive.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := File(name, b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, r := range runs {
		if r.SourceSHA256 != SHA256(b) || r.SourceFile != name || len(r.Document) == 0 {
			t.Errorf("%s: provenance %q %q, document %d bytes", name, r.SourceFile, r.SourceSHA256, len(r.Document))
		}
	}
	return runs
}

func num(t *testing.T, r *archive.Run, axis string) float64 {
	t.Helper()
	a, ok := r.Axes[axis]
	if !ok || a.Num == nil {
		t.Fatalf("run %s has no numeric %s axis: %+v", r.ID, axis, r.Axes)
	}
	return *a.Num
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestIperf2LongTCPClient(t *testing.T) {
	runs := importFixture(t, "iperf2-long-tcp.txt")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	r := runs[0]
	m := r.Summary
	// "[ 3] 0.0-1800.0 sec 179400 MBytes 836 Mbits/sec": bytes as printed, in iperf's units.
	if m.SentBps == nil || *m.SentBps != 836e6 || *m.SentBytes != 179400<<20 || *m.Seconds != 1800 || m.ReceivedBps != nil {
		t.Errorf("summary %+v", m.Values())
	}
	if !r.Rounded || r.Source != archive.SourceIperf2Text || r.RemoteHost != "196.32.210.12" {
		t.Errorf("run %+v", r)
	}
	if len(r.Intervals) != 6 || r.Intervals[0].End != 15 || *r.Intervals[0].Bytes != 372<<20 {
		t.Errorf("intervals %+v", r.Intervals)
	}
	// "TCP window size: 15.3 MByte (default)": the window axis is the
	// default, its own value, and the size it came to is the send buffer
	// granted.
	if num(t, r, "time") != 1800 || r.Axes["time"].Label != "1800s" || num(t, r, "parallel") != 1 ||
		r.Axes["window"] != (archive.Axis{Label: "default"}) || m.Figures[archive.FigureSndbufGranted] != math.Round(15.3*1024*1024) {
		t.Errorf("axes %+v, figures %v", r.Axes, m.Figures)
	}
}

func TestIperf2UDPServerReportAfterTCPHeader(t *testing.T) {
	runs := importFixture(t, "iperf2-long-udp-server.txt")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	m := runs[0].Summary
	// "[ 3] 0.0-899.9 sec 75.4 GBytes 720 Mbits/sec 0.006 ms 705679/55799972 (1.3%)"
	if m.ReceivedBps == nil || *m.ReceivedBps != 720e6 || *m.JitterMs != 0.006 || !near(*m.LostPercent, 100*705679.0/55799972) {
		t.Errorf("summary %+v", m.Values())
	}
	// "[ 3] 0.0-899.9 sec 2 datagrams received out-of-order"
	if m.OutOfOrder == nil || *m.OutOfOrder != 2 {
		t.Errorf("out of order %v", m.OutOfOrder)
	}
	if runs[0].Axes["proto"].Label != "udp" || num(t, runs[0], "time") != 900 || len(runs[0].Intervals) != 5 {
		t.Errorf("axes %+v, %d intervals", runs[0].Axes, len(runs[0].Intervals))
	}
	if iv := runs[0].Intervals[0]; iv.LostPackets == nil || *iv.LostPackets != 671 || *iv.Packets != 934133 {
		t.Errorf("first interval %+v", iv)
	}
}

func TestIperf2ExactBytesAndCommandLine(t *testing.T) {
	r := importFixture(t, "iperf2-server-scheduled.txt")[0]
	m := r.Summary
	if r.Rounded || *m.ReceivedBytes != 1064869888 || *m.ReceivedBps != 849811323 {
		t.Errorf("summary %+v rounded %v", m.Values(), r.Rounded)
	}
	// -w 2097152 asked for, 4194304 granted: the window axis is what was asked.
	// The server's log: the receive buffer granted.
	if num(t, r, "window") != 2097152 || num(t, r, "time") != 10 || len(r.Intervals) != 5 || m.Figures[archive.FigureRcvbufGranted] != 4194304 {
		t.Errorf("axes %+v, figures %v", r.Axes, m.Figures)
	}
	flat := importFixture(t, "iperf2-flattened.txt")[0]
	if *flat.Summary.SentBytes != 4161880064 || num(t, flat, "window") != 25600 || num(t, flat, "time") != 60 {
		t.Errorf("a log flattened onto one line: %+v %+v", flat.Summary.Values(), flat.Axes)
	}
}

func TestIperf2ParallelAndServerLogs(t *testing.T) {
	r := importFixture(t, "iperf2-client-tcp-p2.txt")[0]
	// [SUM] 0.0000-1.0010 sec  2.56 GBytes  21.9 Gbits/sec
	if *r.Summary.SentBps != 21.9e9 || num(t, r, "parallel") != 2 || r.Axes["window"].Label != "default" || r.Summary.Figures[archive.FigureSndbufGranted] != 16384 {
		t.Errorf("-P 2: %+v %+v", r.Summary.Values(), r.Axes)
	}
	srv := importFixture(t, "iperf2-server-tcp.txt")
	if len(srv) != 3 {
		t.Fatalf("a server log of three tests gave %d runs", len(srv))
	}
	var doc strings.Builder
	for i, r := range srv {
		doc.Write(r.Document)
		if r.ID != srv[0].ID[:len(srv[0].ID)-1]+strconv.Itoa(i+1) || r.Summary.ReceivedBps == nil {
			t.Errorf("run %d: %s %+v", i, r.ID, r.Summary.Values())
		}
	}
	whole, _ := os.ReadFile("testdata/iperf2-server-tcp.txt")
	if doc.String() != string(whole) {
		t.Error("the runs' documents do not add up to the log")
	}
	if num(t, srv[1], "parallel") != 2 || *srv[2].Summary.ReceivedBps != 22.2e9 {
		t.Errorf("server runs %+v %+v", srv[1].Axes, srv[2].Summary.Values())
	}
	udp := importFixture(t, "iperf2-client-udp.txt")[0]
	if *udp.Summary.SentBps != 10.5e6 || *udp.Summary.ReceivedBps != 10.5e6 || *udp.Summary.LostPercent != 0 || num(t, udp, "length") != 1470 {
		t.Errorf("UDP client with a server report: %+v %+v", udp.Summary.Values(), udp.Axes)
	}
}

func TestIperf2CSV(t *testing.T) {
	r := importFixture(t, "iperf2-client-tcp.csv")[0]
	if r.Rounded || r.DocumentFormat != archive.FormatCSV || *r.Summary.SentBytes != 1200619580+1576403004 || num(t, r, "parallel") != 2 {
		t.Errorf("-y C: %+v %+v", r.Summary.Values(), r.Axes)
	}
	u := importFixture(t, "iperf2-client-udp.csv")[0]
	if u.Axes["proto"].Label != "udp" || *u.Summary.SentBps != 5265375 {
		t.Errorf("-y C UDP: %+v %+v", u.Summary.Values(), u.Axes)
	}
}

func TestJSONDocuments(t *testing.T) {
	r := importFixture(t, "iperf3-server-output.json")[0]
	if r.Source != archive.SourceIperf3JSON || r.Summary.ReceivedBps == nil || r.Summary.Retransmits == nil || r.Started.IsZero() {
		t.Errorf("iperf3: %+v", r)
	}
	w := importFixture(t, "wireperf-udp.json")[0]
	if w.Source != archive.SourceWireperfJSN || w.Summary.JitterMs == nil || len(w.Limits) == 0 {
		t.Errorf("wireperf: %+v", w)
	}
}

func TestNotALog(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", "{\"a\": 1}", "\x00\x01binary", "[ 3] 10.0-5.0 sec 1 MBytes 1 Mbits/sec\n"} {
		_, err := File("x", []byte(in))
		var nl *NotLogError
		if !errors.As(err, &nl) || nl.Reason == "" {
			t.Errorf("File(%q) = %v, want a reason it is not a log", in, err)
		}
	}
}

// startListening starts a server and returns once it prints the line
// that says it listens; the server is killed when the test ends.
func startListening(t *testing.T, ready string, argv ...string) {
	t.Helper()
	srv := exec.Command(argv[0], argv[1:]...)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	guard := time.AfterFunc(20*time.Second, func() { srv.Process.Kill() }) // a server that never says it listens
	defer guard.Stop()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), ready) {
			go io.Copy(io.Discard, stdout) // keep the pipe drained
			return
		}
	}
	t.Fatalf("%s never said %q", argv[0], ready)
}

// Real output of the iperf (2.x) that Debian ships, captured on loopback.
func TestImportCapturedIperf2(t *testing.T) {
	if _, err := exec.LookPath("iperf"); err != nil {
		t.Skip("iperf (2.x) is not installed (apt-get install iperf)")
	}
	port := strconv.Itoa(loopback.FreePort(t))
	startListening(t, "Server listening", "iperf", "-s", "-B", "127.0.0.1", "-p", port)
	out, err := exec.Command("iperf", "-c", "127.0.0.1", "-p", port, "-t", "1", "-i", "0.5", "-P", "2", "-w", "256K").CombinedOutput()
	if err != nil {
		t.Fatalf("iperf client: %v\n%s", err, out)
	}
	runs, ferr := File("client.txt", out)
	if ferr != nil || len(runs) != 1 {
		t.Fatalf("client log: %v, %d runs\n%s", ferr, len(runs), out)
	}
	r := runs[0]
	if r.Summary.SentBps == nil || *r.Summary.SentBps <= 0 || num(t, r, "parallel") != 2 || num(t, r, "window") != 256*1024 || num(t, r, "time") != 1 || len(r.Intervals) < 4 {
		t.Errorf("client run %+v %+v, %d intervals\n%s", r.Summary.Values(), r.Axes, len(r.Intervals), out)
	}
}

// Real iperf3 -J output with --get-server-output, captured on loopback.
func TestImportCapturedIperf3(t *testing.T) {
	bin := iperf3bin.Need(t)
	port := strconv.Itoa(loopback.FreePort(t))
	startListening(t, "Server listening", bin, "-s", "-1", "--forceflush", "-B", "127.0.0.1", "-p", port)
	out, err := exec.Command(bin, "-c", "127.0.0.1", "-p", port, "-t", "1", "-J", "--get-server-output").Output()
	if err != nil {
		t.Fatalf("iperf3 client: %v\n%s", err, out)
	}
	runs, err := File("iperf3.json", out)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%v\n%.500s", err, out)
	}
	var doc struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	json.Unmarshal(out, &doc)
	if r := runs[0]; r.Source != archive.SourceIperf3JSON || r.Summary.ReceivedBps == nil || *r.Summary.ReceivedBps != doc.End.SumReceived.BitsPerSecond {
		t.Errorf("run %+v", r.Summary.Values())
	}
}

// A log with a number out of range is refused, naming its line, rather
// than stored as +Inf (which broke `runs -J` for the whole archive) or as
// a wrapped-around count; so is a forged log whose streams add up beyond
// an int64. Figures in range still import.
func TestOutOfRangeNumbersAreRefused(t *testing.T) {
	huge := strings.Repeat("9", 400)
	head := "------------------------------------------------------------\nClient connecting to h, TCP port 5001\n"
	for name, tc := range map[string]struct{ log, want string }{
		"400-digit bytes":     {head + "[  3]  0.0-10.0 sec  " + huge + " MBytes  1.00 Mbits/sec\n", "line 3: byte count 99999999999999999999… (400 digits) is out of range"},
		"400-digit rate":      {head + "[  3]  0.0-10.0 sec  1 MBytes  " + huge + " Mbits/sec\n", "line 3: rate"},
		"finite, overflowing": {head + "[  3]  0.0-10.0 sec  1" + strings.Repeat("0", 305) + " TBytes  1 Mbits/sec\n", "line 3: byte count"},
		"400-digit time":      {head + "[  3]  0.0-" + huge + " sec  1 MBytes  1 Mbits/sec\n", "line 3: end time"},
		"400-digit loss":      {head + "[  3]  0.0-10.0 sec  1 MBytes  1 Mbits/sec  0.1 ms " + huge + "/100 (1%)\n", "line 3: datagram count"},
		"400-digit window":    {"TCP window size: " + huge + " KByte (default)\n[  3]  0.0-10.0 sec  1 MBytes  1 Mbits/sec\n", "line 1: buffer size"},
		"csv bytes":           {"20260101120000,1.2.3.4,1,5.6.7.8,2,3,0.0-1.0," + huge + ",1\n", "line 1: byte count"},
		"csv rate":            {"20260101120000,1.2.3.4,1,5.6.7.8,2,3,0.0-1.0,1,1" + strings.Repeat("0", 40) + "\n", "line 1: rate"},
		"streams add up": {head +
			func() string {
				var b strings.Builder
				for i := 1; i <= 600; i++ {
					b.WriteString("[" + strconv.Itoa(i) + "]  0.0-10.0 sec  8000000 GBytes  1 Mbits/sec\n")
				}
				return b.String()
			}(), "lines 3-602: the streams add up"},
	} {
		runs, err := File("x.log", []byte(tc.log))
		var nl *NotLogError
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &nl) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %d runs, error %v; want one line with %q", name, len(runs), err, tc.want)
		}
	}
	runs, err := File("x.log", []byte(head+"[  3]  0.0-10.0 sec  8388608 GBytes  6871947 Mbits/sec\n"))
	if err != nil || len(runs) != 1 || *runs[0].Summary.SentBytes != 8388608<<30 {
		t.Fatalf("8 PiB in 10 s: %v, %v", runs, err)
	}
}
