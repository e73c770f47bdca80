//go:build linux

package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/advise/guide"
	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/lab/labtest"
)

// The advise acceptance tests (accept_advise_*_test.go) run `wireperf
// advise` between two lab hosts exactly as a user would: a wireperf
// server as its own process inside b (startServer), and advise as its
// own process inside a (this test binary again, TestAdviseHelper).
// Both are started with `ip netns exec` (labtest). Separate processes
// matter here for two reasons: each end reads its kernel limits
// (tcp_rmem...) from /proc/sys, which shows the namespace of the
// process, and each end's CPU figure is its process's CPU, which in
// this process would include the impairment router's.

const adviseHelperEnv = "WIREPERF_LAB_ADVISE"

// adviseJob is the advise run the helper process does.
type adviseJob struct {
	Bind       string        `json:"bind"`
	Host       string        `json:"host,omitempty"`
	Port       int           `json:"port,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	Streams    int           `json:"streams,omitempty"`
	Bottleneck float64       `json:"bottleneck,omitempty"`
	Congestion string        `json:"congestion,omitempty"`
	Out        string        `json:"out,omitempty"` // directory for report.json and report.txt
}

// TestAdviseHelper is not a test: runAdviseIn runs the test binary with
// it inside a lab host to get an advise run there.
func TestAdviseHelper(t *testing.T) {
	raw := os.Getenv(adviseHelperEnv)
	if raw == "" {
		t.Skip("helper process for the advise acceptance tests")
	}
	var job adviseJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rep, err := guide.Run(ctx, guide.Config{
		Host: job.Host, Port: job.Port, Bind: job.Bind, Duration: job.Duration, Streams: job.Streams,
		Bottleneck: job.Bottleneck, Congestion: job.Congestion, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(job.Out, "report.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(job.Out, "report.txt"), text.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runAdviseIn runs `wireperf advise` in host from against the server at
// to:port, each test d long (0: as advise chooses), and returns the report and its text.
func runAdviseIn(t *testing.T, from, to *Host, port int, d time.Duration, bottleneck float64, cc string) (*advise.Report, string) {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	job, err := json.Marshal(adviseJob{
		Bind: from.Addr.String(), Host: to.Addr.String(), Port: port,
		Duration: d, Bottleneck: bottleneck, Congestion: cc, Out: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := labtest.Start(t, helperHost(from), []string{adviseHelperEnv + "=" + string(job)},
		"-test.run=^TestAdviseHelper$", "-test.count=1", "-test.v")
	wait := 2*d + 90*time.Second
	if d == 0 { // advise chooses: up to two single-stream tests and the multi-stream ones
		wait = 2*advise.MaxTestLength + advise.MaxStreamTime + 2*advise.MaxTestLength + 60*time.Second
	}
	exited, err := p.Wait(wait)
	if !exited {
		t.Fatalf("advise in %s did not finish:\n%s", from.Name, p.Output())
	}
	if err != nil {
		t.Fatalf("advise in %s failed (%v):\n%s", from.Name, err, p.Output())
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("advise wrote no report (%v):\n%s", err, p.Output())
	}
	var rep advise.Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("advise took %v:\n%s", time.Since(start).Round(100*time.Millisecond), text)
	return &rep, string(text)
}

// adviseLab is a ─ r ─ b with the impairment router in r, the same
// impairment both ways, and the sysctls given.
func adviseLab(t *testing.T, cfg impair.Config, start uint64, sysctls map[string]string) *Lab {
	t.Helper()
	return newRouterLab(t, 1500, RouterSpec{AtoB: cfg, BtoA: cfg, RandStart: start}, sysctls)
}

// gigabit is a 1 Gbit/s line counted as real Ethernet counts it (38 bytes
// of framing per packet, so TCP tops out at 941 Mbit/s), with rtt/2 of
// delay each way.
func gigabit(rtt time.Duration) impair.Config {
	return impair.Config{Delay: rtt / 2, Rate: 1e9, Overhead: 38}
}
