package cli

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAdviseText(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("advise", "127.0.0.1", "-p", port, "-t", "0.5", "-P", "2", "--probes", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"wireperf advise 127.0.0.1:" + port, "Baseline RTT", "Path          MTU", "1 stream ", "2 streams ",
		"Bottleneck", "BDP", "Verdict: ", "What to do:"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "advise: 2-stream test") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
}

func TestAdviseJSON(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("advise", "127.0.0.1", "-p", port, "-t", "0.5", "-P", "2", "--probes", "3", "--bottleneck", "100g", "-J")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Probes           []struct{ RTTus uint32 } `json:"probes"`
		BaselineRTTus    uint32                   `json:"baseline_rtt_us"`
		BottleneckBps    float64                  `json:"bottleneck_bps"`
		BottleneckSource string                   `json:"bottleneck_source"`
		BDPBytes         float64                  `json:"bdp_bytes"`
		Single           struct {
			Streams    int     `json:"streams"`
			GoodputBps float64 `json:"goodput_bps"`
		} `json:"single"`
		Multi struct {
			Streams int `json:"streams"`
		} `json:"multi"`
		Verdict struct {
			Limit   string `json:"limit"`
			Summary string `json:"summary"`
		} `json:"verdict"`
		Advice  struct{ Steps []string } `json:"advice"`
		Results []json.RawMessage        `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(rep.Probes) != 3 || rep.BottleneckBps != 100e9 || rep.BottleneckSource != "given" || rep.Single.Streams != 1 ||
		rep.Multi.Streams != 2 || rep.Single.GoodputBps <= 0 || rep.Verdict.Limit == "" || rep.Verdict.Summary == "" ||
		len(rep.Advice.Steps) == 0 || len(rep.Results) != 2 {
		t.Errorf("report %+v", rep)
	}
	if strings.Contains(stderr, "advise:") {
		t.Errorf("progress lines with -J: %q", stderr)
	}
}

func TestAdviseUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"advise"}, "HOST"},
		{[]string{"advise", "h", "-t", "0.1"}, "-t"},
		{[]string{"advise", "h", "-P", "1"}, "-P 1"},
		{[]string{"advise", "h", "--bottleneck", "fast"}, "--bottleneck"},
		{[]string{"advise", "h", "--probes", "0"}, "--probes"},
		{[]string{"-c", "h", "--tcpinfo-interval", "500us"}, "--tcpinfo-interval"},
		{[]string{"-c", "h", "--bottleneck", "fast"}, "--bottleneck"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d mentioning %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

// A reverse test's timeline is the server's: it arrives in the server's
// final report, and lands in the JSON and the CSV.
func TestClientTCPTimeline(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	csvPath := filepath.Join(t.TempDir(), "tl.csv")
	code, out, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "-R", "-J",
		"--tcpinfo-interval", "50ms", "--tcpinfo-csv", csvPath, "--bottleneck", "100g")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Wireperf struct {
			TCP []struct {
				TransferTimeRatio *float64 `json:"transfer_time_ratio"`
			} `json:"tcp"`
			Result struct {
				Remote struct {
					Streams []struct {
						Sender   bool `json:"sender"`
						Timeline *struct {
							Period  float64               `json:"period"`
							Samples []struct{ T float64 } `json:"samples"`
						} `json:"tcp_timeline"`
						Stats *struct {
							BytesSent uint64 `json:"bytes_sent"`
						} `json:"tcp_stats"`
					} `json:"streams"`
				} `json:"remote"`
			} `json:"result"`
		} `json:"wireperf"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	ss := doc.Wireperf.Result.Remote.Streams
	if len(ss) != 1 || !ss[0].Sender || ss[0].Timeline == nil || ss[0].Stats == nil || ss[0].Stats.BytesSent == 0 {
		t.Fatalf("the server's stream lacks its TCP internals: %+v", ss)
	}
	tl := ss[0].Timeline
	// This server runs in the test's process, so it samples at 50 ms too.
	if tl.Period != 0.05 || len(tl.Samples) < 15 || len(tl.Samples) > 22 {
		t.Errorf("timeline: %d samples at %v s over 1 s", len(tl.Samples), tl.Period)
	}
	for i := 1; i < len(tl.Samples); i++ {
		if tl.Samples[i].T <= tl.Samples[i-1].T {
			t.Fatalf("timeline not monotonic at %d", i)
		}
	}
	if len(doc.Wireperf.TCP) != 1 || doc.Wireperf.TCP[0].TransferTimeRatio == nil {
		t.Errorf("no Transfer Time Ratio with --bottleneck: %+v", doc.Wireperf.TCP)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(tl.Samples)+1 || rows[1][2] != "server" {
		t.Errorf("CSV has %d rows (first %q) for %d samples", len(rows), rows[1], len(tl.Samples))
	}
}

func TestClientTextShowsTCPInternals(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-t", "0.5")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"TCP busy", "RFC 6349: TCP Efficiency", "Transfer Time Ratio needs --bottleneck RATE"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
