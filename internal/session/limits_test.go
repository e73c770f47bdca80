package session_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// TestLimitsCarryTheQdisc runs a short loopback test and reads its -J
// document: each end's limits name the interface of its data connection
// (lo) and that interface's root qdisc, beside the kernel's limits.
func TestLimitsCarryTheQdisc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the interface's qdisc is read on Linux only")
	}
	port := startServer(t)

	s := spec.Default()
	s.Duration, s.Interval = 300*time.Millisecond, 0
	s.Bytes = 64 << 20 // whichever comes first
	runCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	res, err := session.RunClient(runCtx, session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: port, ConnectTimeout: 5 * time.Second, Spec: s,
	}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (&emit.JSON{W: &b}).Write(res); err != nil {
		t.Fatal(err)
	}
	doc := jsondoc.Decode(t, b.Bytes())
	for _, end := range []string{"local", "remote"} {
		l, _ := jsondoc.At(t, doc, "wireperf", "result", end, "limits").(map[string]any)
		if q, _ := l["qdisc"].(string); q == "" || l["interface"] != "lo" || l["tcp_rmem"] == nil {
			t.Errorf("%s end's limits %v: want the interface lo, its qdisc and the kernel's limits", end, l)
		}
	}
	// Each end's peak memory travels with its end report, and -J shows
	// both (the server's came over the wire).
	for _, key := range []string{"host_peak_rss_bytes", "remote_peak_rss_bytes"} {
		if v := jsondoc.IntAt(t, doc, "end", "cpu_utilization_percent", key); v < 1<<20 {
			t.Errorf("%s %v: want the process's peak resident memory, over 1 MiB", key, v)
		}
	}
}
