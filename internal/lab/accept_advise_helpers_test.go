//go:build linux

package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/advise/guide"
	"github.com/wireperf/wireperf/internal/lab/impair"
	"github.com/wireperf/wireperf/internal/server"
)

// The advise acceptance tests (accept_advise_*_test.go) run `wireperf
// advise` between two lab hosts exactly as a user would: a wireperf
// server as its own process inside b, and advise as its own process
// inside a. Both are this test binary again (TestAdviseHelper), started
// with `ip netns exec`. Separate processes matter here for two reasons:
// each end reads its kernel limits (tcp_rmem...) from /proc/sys, which
// shows the namespace of the process, and each end's CPU figure is its
// process's CPU, which in this process would include the impairment
// router's.

const adviseHelperEnv = "WIREPERF_LAB_ADVISE"

// adviseJob is what the helper process does: serve, or advise.
type adviseJob struct {
	Mode       string        `json:"mode"` // "server" or "advise"
	Bind       string        `json:"bind"`
	Host       string        `json:"host,omitempty"`
	Port       int           `json:"port,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	Streams    int           `json:"streams,omitempty"`
	Bottleneck float64       `json:"bottleneck,omitempty"`
	Congestion string        `json:"congestion,omitempty"`
	Out        string        `json:"out,omitempty"` // directory for report.json and report.txt
}

// TestAdviseHelper is not a test: the advise acceptance tests run the test
// binary with it inside a lab host to get a wireperf server or an advise
// run there.
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
	switch job.Mode {
	case "server":
		srv := server.New(server.Config{Bind: job.Bind, Limits: server.DefaultLimits(), ShutdownGrace: time.Second, Logger: logger})
		if err := srv.Listen(); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ADVISESERVER %d\n", srv.Addr().Port)
		if err := srv.Serve(ctx); err != nil {
			t.Fatal(err)
		}
	case "advise":
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
	default:
		t.Fatalf("unknown mode %q", job.Mode)
	}
}

// adviseOutput collects a helper's output and hands on the port from its
// "ADVISESERVER PORT" line.
type adviseOutput struct {
	mu   sync.Mutex
	all  bytes.Buffer
	port chan int
}

func (o *adviseOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all.Write(p)
	if len(o.port) > 0 {
		return len(p), nil
	}
	for _, line := range strings.Split(o.all.String(), "\n") {
		if s, ok := strings.CutPrefix(line, "ADVISESERVER "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				select {
				case o.port <- n:
				default:
				}
			}
		}
	}
	return len(p), nil
}

func (o *adviseOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String()
}

// adviseHelper starts the helper in host h with job and returns a channel
// that yields its exit, and its output.
func adviseHelper(t *testing.T, h *Host, job adviseJob) (<-chan error, *adviseOutput, context.CancelFunc) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := h.Command(ctx, bin, "-test.run=^TestAdviseHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), adviseHelperEnv+"="+string(js))
	out := &adviseOutput{port: make(chan int, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, out, cancel
}

// startAdviseServer runs a wireperf server in h, bound to h's address, for
// the rest of the test, and returns its port.
func startAdviseServer(t *testing.T, h *Host) int {
	t.Helper()
	exited, out, cancel := adviseHelper(t, h, adviseJob{Mode: "server", Bind: h.Addr.String()})
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("wireperf server in %s said:\n%s", h.Name, out)
		}
	})
	select {
	case port := <-out.port:
		return port
	case err := <-exited:
		t.Fatalf("wireperf server in %s exited before listening (%v):\n%s", h.Name, err, out)
	case <-time.After(20 * time.Second):
		t.Fatalf("wireperf server in %s did not listen within 20 s:\n%s", h.Name, out)
	}
	return 0
}

// runAdviseIn runs `wireperf advise` in host from against the server at
// to:port, each test d long, and returns the report and its text.
func runAdviseIn(t *testing.T, from, to *Host, port int, d time.Duration, bottleneck float64, cc string) (*advise.Report, string) {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	exited, out, cancel := adviseHelper(t, from, adviseJob{
		Mode: "advise", Bind: from.Addr.String(), Host: to.Addr.String(), Port: port,
		Duration: d, Bottleneck: bottleneck, Congestion: cc, Out: dir,
	})
	defer cancel()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("advise in %s failed (%v):\n%s", from.Name, err, out)
		}
	case <-time.After(2*d + 90*time.Second):
		t.Fatalf("advise in %s did not finish:\n%s", from.Name, out)
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatalf("advise wrote no report (%v):\n%s", err, out)
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
func adviseLab(t *testing.T, cfg impair.Config, seed uint64, sysctls map[string]string) *Lab {
	t.Helper()
	return newRouterLab(t, 1500, RouterSpec{AtoB: cfg, BtoA: cfg, Seed: seed}, sysctls)
}

// gigabit is a 1 Gbit/s line counted as real Ethernet counts it (38 bytes
// of framing per packet, so TCP tops out at 941 Mbit/s), with rtt/2 of
// delay each way.
func gigabit(rtt time.Duration) impair.Config {
	return impair.Config{Delay: rtt / 2, Rate: 1e9, Overhead: 38}
}
