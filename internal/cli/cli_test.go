package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, env{stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

func TestIperfStyleArgs(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"-s"}, []string{"server"}},
		{[]string{"-s", "-p", "5004"}, []string{"server", "-p", "5004"}},
		{[]string{"-p", "5004", "-s"}, []string{"server", "-p", "5004"}},
		{[]string{"-c", "host", "-t", "30"}, []string{"client", "host", "-t", "30"}},
		{[]string{"-t", "30", "-c", "host"}, []string{"client", "host", "-t", "30"}},
		{[]string{"-chost"}, []string{"client", "host"}},
		{[]string{"--client=host", "-R"}, []string{"client", "host", "-R"}},
		{[]string{"client", "host"}, []string{"client", "host"}},
		{[]string{"--help"}, []string{"--help"}},
		// -c without a host goes to the client, which asks for one.
		{[]string{"-c"}, []string{"client"}},
		{[]string{"-c", "-t", "5"}, []string{"client", "-t", "5"}},
		{[]string{"-R", "--client"}, []string{"client", "-R"}},
	}
	for _, tc := range tests {
		if got := iperfStyle(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("iperfStyle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBadUsageExitsTwoWithOneLine(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-c", "h", "--no-such-flag"}, "--no-such-flag"},
		{[]string{"-c", "h", "-w", "12x"}, "12x"},
		{[]string{"-c", "h", "-t", "-5"}, "-5"},
		{[]string{"-c", "h", "-P", "0"}, "-P 0"},
		{[]string{"-c", "h", "-P", "many"}, "many"},
		{[]string{"-c", "h", "-f", "q"}, "q"},
		{[]string{"-c", "h", "-R", "--bidir"}, "choose one"},
		{[]string{"-c", "h", "--dscp", "XX"}, "DSCP"},
		{[]string{"-c", "h", "-p", "70000"}, "-p 70000"},
		{[]string{"-c", "h", "-b", "100mbit"}, `invalid rate "100mbit": unknown suffix "mbit"`},
		{[]string{"client"}, "HOST"},
		{[]string{"-c"}, "say which server to test: wireperf -c HOST"},
		{[]string{"-c", "-t", "5"}, "wireperf -c HOST"},
		{[]string{"-c", "h", "-n", "0", "-t", "0"}, "-t 0 needs -n"},
		{[]string{"client", "a", "b"}, "HOST"},
		{[]string{"server", "-p", "-1"}, "-p -1"},
		{[]string{"server", "--log-level", "loud"}, "--log-level"},
		{nil, "-s, -c HOST"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(tc.args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, ExitUsage, stderr)
		}
		if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q, want one line mentioning %q", tc.args, stderr, tc.want)
		}
		if strings.Contains(stderr, "goroutine") || strings.Contains(stderr, "panic") {
			t.Errorf("%q: stack trace in %q", tc.args, stderr)
		}
	}
}

// -n 0 sets no byte limit, as in iperf3: the test runs for -t's default
// rather than being refused as "-t 0 needs -n".
func TestZeroBytesMeansNoByteLimit(t *testing.T) {
	for _, tc := range []struct {
		args []string
		time time.Duration
		n    int64
	}{
		{[]string{"-n", "0"}, 10 * time.Second, 0},
		{[]string{"-n", "1M"}, 0, 1 << 20},
		{[]string{"-n", "1M", "-t", "3"}, 3 * time.Second, 1 << 20},
	} {
		f := newClientFlags()
		cmd := &cobra.Command{}
		f.register(cmd)
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := f.finish(cmd); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if f.Spec.Duration != tc.time || f.Spec.Bytes != tc.n {
			t.Errorf("%q: -t %v -n %d; want -t %v -n %d", tc.args, f.Spec.Duration, f.Spec.Bytes, tc.time, tc.n)
		}
	}
}

func TestUnreachableServerExitsOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	code, _, stderr := runCLI("-c", "127.0.0.1", "-p", port, "--connect-timeout", "2")
	if code != ExitFailed || !strings.Contains(stderr, "connection refused") {
		t.Fatalf("exit %d, stderr %q; want 1 and connection refused", code, stderr)
	}
}

// startServer runs a server on loopback until the test ends; it returns
// the port.
func startServer(t *testing.T) int { return loopserver.Start(t).Addr().Port }

// startServerWith is startServer with the configuration changed first.
func startServerWith(t *testing.T, mutate func(*server.Config)) int {
	return loopserver.Start(t, mutate).Addr().Port
}

func TestClientTextReport(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "-i", "0.5", "-w", "256K", "-T", "lan")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"lan:", "sender", "receiver", "WARNING: requested", "MSS", "CPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestClientJSONReport(t *testing.T) {
	port := strconv.Itoa(startServer(t))
	code, out, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-n", "4M", "-P", "2", "-J")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		End struct {
			SumSent     struct{ Bytes int64 } `json:"sum_sent"`
			SumReceived struct{ Bytes int64 } `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, out)
	}
	if doc.End.SumSent.Bytes != 4<<20 || doc.End.SumReceived.Bytes != 4<<20 {
		t.Fatalf("sum_sent %d, sum_received %d, want both %d", doc.End.SumSent.Bytes, doc.End.SumReceived.Bytes, 4<<20)
	}
}

func TestSelftest(t *testing.T) {
	// With -R the server sends, so its timeline is the one in the CSV:
	// the period travels in the test's spec.
	for _, tc := range []struct {
		interval string
		min, max int // CSV rows for 0.5 s
	}{
		{"20ms", 12, 1000}, // about 25; the default 100 ms gives about 5
		{"0", 0, 0},        // off
	} {
		t.Run(tc.interval, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), "timeline.csv")
			code, out, stderr := runCLI("selftest", "-t", "0.5", "-R", "--tcpinfo-interval", tc.interval, "--tcpinfo-csv", csv)
			if code != ExitOK || !strings.Contains(out, "selftest passed") {
				t.Fatalf("exit %d, stderr %q, out:\n%s", code, stderr, out)
			}
			// One process holds both ends: one CPU figure, said as such.
			if !strings.Contains(out, "CPU Utilization: client and server in one process") || strings.Contains(out, "remote/server") {
				t.Errorf("selftest's CPU line:\n%s", out)
			}
			b, err := os.ReadFile(csv)
			if err != nil {
				t.Fatalf("selftest wrote no --tcpinfo-csv: %v", err)
			}
			if rows := strings.Count(strings.TrimSpace(string(b)), "\n"); rows < tc.min || rows > tc.max {
				t.Errorf("--tcpinfo-csv has %d samples for 0.5 s at %s, want %d to %d:\n%s", rows, tc.interval, tc.min, tc.max, b)
			}
		})
	}
}

// A plain `wireperf -c` finds out that the server is iperf3 and goes on in
// iperf3's protocol, on the same connection.
func TestClientSwitchesToIperf3(t *testing.T) {
	bin := iperf3bin.Need(t)
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "-s", "-1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = srv.Wait() }()
	var code int
	var out, stderr string
	for try := 0; try < 50; try++ { // until iperf3 listens
		code, out, stderr = runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "-J", "--connect-timeout", "5")
		if !strings.Contains(stderr, "connection refused") {
			break
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: until iperf3 listens, at most 50 tries
	}
	if code != ExitOK || !strings.Contains(stderr, "switching to iperf3 mode") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var doc struct {
		End struct {
			SumReceived struct{ Bytes int64 } `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.End.SumReceived.Bytes == 0 {
		t.Fatalf("JSON %v, received %d", err, doc.End.SumReceived.Bytes)
	}
}
