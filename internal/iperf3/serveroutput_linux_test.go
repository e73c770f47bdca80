package iperf3

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// iperf3Latest is a recent iperf3 build, where one is installed.
const iperf3Latest = "/root/.cache/iperf3-latest/bin/iperf3"

// serveOnce starts `bin -s -1` (with extra) on a free port and waits,
// bounded, until it listens.
func serveOnce(t *testing.T, bin string, extra ...string) (*exec.Cmd, int) {
	t.Helper()
	port := loopback.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cmd := exec.CommandContext(ctx, bin, append([]string{"-s", "-1", "-p", strconv.Itoa(port)}, extra...)...)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	for deadline := time.Now().Add(listenWait); !listening(port); {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %d", bin, port)
		}
		time.Sleep(10 * time.Millisecond) // bounded poll: the port iperf3 binds, until the deadline above
	}
	return cmd, port
}

// reportShape is a server report's lines with their figures and their
// units' prefixes taken out: what two runs of one test have in common.
func reportShape(text string) []string {
	figures := regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	prefixes := regexp.MustCompile(`\b[KMGT](Bytes|bits/sec)`)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = prefixes.ReplaceAllString(figures.ReplaceAllString(line, "#"), "$1")
		line = strings.Join(strings.Fields(line), " ")
		if len(out) == 0 || out[len(out)-1] != line { // a row per second, however many seconds
			out = append(out, line)
		}
	}
	return out
}

// Our client's --get-server-output against iperf3's server gets the
// text iperf3's own client gets (server_output_text), line for line up
// to the figures; and the server's JSON document from a server run with
// -J (server_output_json).
func TestGetServerOutputFromIperf3(t *testing.T) {
	for name, bin := range map[string]string{"debian": iperf3Path, "latest": iperf3Latest} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(bin); err != nil {
				t.Skip("iperf3 is not installed at " + bin)
			}
			// iperf3's client, for the reference.
			_, port := serveOnce(t, bin)
			out, err := exec.Command(bin, "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "1", "-J", "--get-server-output").Output()
			if err != nil {
				t.Fatalf("iperf3 client: %v", err)
			}
			var theirs struct {
				Text string `json:"server_output_text"`
			}
			if err := json.Unmarshal(out, &theirs); err != nil || theirs.Text == "" {
				t.Fatalf("iperf3's client got no server_output_text (%v): %s", err, out)
			}

			_, port = serveOnce(t, bin)
			res, err := RunClient(context.Background(), ClientConfig{Host: "127.0.0.1", Port: port, Spec: clientSpec(nil), GetServerOutput: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.ServerOutput == nil || res.ServerOutput.Text == "" {
				t.Fatalf("no server output: %+v", res.ServerOutput)
			}
			got, want := reportShape(res.ServerOutput.Text), reportShape(theirs.Text)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("server output, figures aside:\n%s\niperf3's client got:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !strings.HasPrefix(res.ServerOutput.Text, "Accepted connection from 127.0.0.1") {
				t.Errorf("server output does not open with the accepted connection:\n%s", res.ServerOutput.Text)
			}

			_, port = serveOnce(t, bin, "-J")
			res, err = RunClient(context.Background(), ClientConfig{Host: "127.0.0.1", Port: port, Spec: clientSpec(nil), GetServerOutput: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.ServerOutput == nil || len(res.ServerOutput.JSON) == 0 {
				t.Fatalf("no JSON server output from iperf3 -s -J: %+v", res.ServerOutput)
			}
			var doc struct {
				End struct {
					SumReceived struct {
						Bytes int64 `json:"bytes"`
					} `json:"sum_received"`
				} `json:"end"`
			}
			if err := json.Unmarshal(res.ServerOutput.JSON, &doc); err != nil || doc.End.SumReceived.Bytes == 0 {
				t.Errorf("server_output_json has no received bytes (%v): %.300s", err, res.ServerOutput.JSON)
			}
		})
	}
}
