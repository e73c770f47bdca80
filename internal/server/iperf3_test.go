package server

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
)

// iperf3Client runs the real iperf3 client bin against ts and returns its
// JSON report's end sums.
func iperf3Client(t *testing.T, bin string, ts *testServer, args ...string) (sent, received int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(ts.Addr().Port), "-J"}, args...)
	out, err := exec.CommandContext(ctx, bin, argv...).Output()
	if err != nil {
		t.Fatalf("iperf3 %v: %v\n%s", argv, err, out)
	}
	var doc struct {
		End struct {
			SumSent     struct{ Bytes int64 } `json:"sum_sent"`
			SumReceived struct{ Bytes int64 } `json:"sum_received"`
		} `json:"end"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("iperf3 JSON: %v", err)
	}
	if doc.Error != "" {
		t.Fatalf("iperf3 reported: %s", doc.Error)
	}
	return doc.End.SumSent.Bytes, doc.End.SumReceived.Bytes
}

// The same port serves iperf3 clients, several at once, beside native
// tests.
func TestIperf3ClientsOnTheSamePort(t *testing.T) {
	bin := iperf3bin.Need(t)
	ts := startServer(t, nil)
	cases := [][]string{
		{"-t", "1"},
		{"-t", "1", "-R", "-P", "2"},
		{"-u", "-b", "10M", "-t", "1"},
	}
	var wg sync.WaitGroup
	for _, args := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent, received := iperf3Client(t, bin, ts, args...)
			if sent == 0 || received == 0 {
				t.Errorf("iperf3 %v: sent %d, received %d", args, sent, received)
			}
		}()
	}
	res := mustRun(t, ts, quickSpec()) // a native test at the same time
	wg.Wait()
	if d := res.Directions()[0]; d.Received.Bytes == 0 {
		t.Error("the native test moved nothing")
	}
	waitFor(t, func() bool { return ts.Stats().TestsFinished >= 4 })
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.results) < 4 {
		t.Errorf("server recorded %d results, want 4", len(ts.results))
	}
}
