//go:build linux

package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/ping"
	"github.com/wireperf/wireperf/internal/tcpconnect"
	"github.com/wireperf/wireperf/internal/testutil/promtest"
)

// A daemon on a runs a ping test and a tcp-connect test to b, which runs
// nothing of wireperf's (a listener the test opens in b takes the
// connects): both land in the archive as finished runs whose documents
// hold what was measured.
func TestLabProbeTasks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the lab needs root for its network namespaces")
	}
	l := lab.New(t, lab.Chain(1500, nil))
	a, b := l.Host("a"), l.Host("b")
	target := b.AddrOn("r")
	// The daemon runs as root here: its group must be admitted to ping
	// sockets, as the packaged unit's must.
	if err := a.Sysctl("net.ipv4.ping_group_range", "0 0"); err != nil {
		t.Fatal(err)
	}
	ln, err := b.Listen(context.Background(), &net.ListenConfig{}, "tcp4", net.JoinHostPort(target.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	db := filepath.Join(dir, "archive.db")
	meshFile := filepath.Join(dir, "mesh.yaml")
	os.WriteFile(meshFile, []byte(fmt.Sprintf(`name: probelab
hosts: {a: {addr: %s}, b: {addr: %s}}
groups: {ab: {pairs: [[a, b]]}}
tests:
  echo:
    test: ping --count 5 --interval 10ms --timeout 1s
    thresholds: {rtt_red_ms: 0.001}
  handshake:
    test: tcp-connect --tcp-port %d --count 5 --interval 10ms --timeout 1s
    thresholds: {rtt_red_ms: 1000, loss_amber: 50}
schedules:
  - {group: ab, test: echo, repeat: 10s, slip: 2s}
  - {group: ab, test: handshake, repeat: 10s, slip: 2s}
`, a.Addr, target, port)), 0o644)
	bin, _ := os.Executable()
	apply := exec.Command(bin, "mesh", "apply", "-f", meshFile, "--db", db)
	apply.Env = append(os.Environ(), envCLI+"=1")
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("mesh apply: %v: %s", err, out)
	}
	cfg := filepath.Join(dir, "a.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("host: a\nlisten: 127.0.0.1:9464\nport: 0\ngrace: 5s\nplan_every: 1s\nhorizon: 30s\nlog_file: %s\n",
		filepath.Join(dir, "a.log"))), 0o644)
	daemonCmd := a.Command(context.Background(), bin, "daemon", "--config", cfg, "--db", db)
	daemonCmd.Env = append(os.Environ(), envCLI+"=1")
	if err := daemonCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		daemonCmd.Process.Signal(syscall.SIGTERM)
		daemonCmd.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "a.log"))
			t.Logf("a's daemon log:\n%s", log)
		}
	})

	ctx := context.Background()
	st, err := archive.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// run waits for the finished run whose command line starts so.
	run := func(cmd string) *archive.Run {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		for time.Now().Before(deadline) {
			runs, err := st.List(ctx, archive.Filter{Host: "b"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range runs {
				if strings.HasPrefix(r.Cmdline, "wireperf "+cmd+" ") && r.State != archive.StateRunning && r.State != archive.StateScheduled {
					full, err := st.Get(ctx, r.ID)
					if err != nil {
						t.Fatal(err)
					}
					return full
				}
			}
			time.Sleep(250 * time.Millisecond) // bounded poll: the archive, until the deadline above
		}
		t.Fatalf("no %s run recorded within 45 s", cmd)
		return nil
	}
	pr := run("ping")
	var pd ping.Document
	if err := json.Unmarshal(pr.Document, &pd); err != nil || pr.State != archive.StateFinished || pd.Ping == nil {
		t.Fatalf("ping run %s (%s): %v: %s", pr.State, pr.Error, err, pr.Document)
	}
	if p := pd.Ping; p.Sent != 5 || p.Received != 5 || p.Addr != target.String() || p.RTT.Count != 5 {
		t.Fatalf("ping run: %+v, want 5 answered by %s", p, target)
	}
	tr := run("tcp-connect")
	var td tcpconnect.Document
	if err := json.Unmarshal(tr.Document, &td); err != nil || tr.State != archive.StateFinished || td.TCPConnect == nil {
		t.Fatalf("tcp-connect run %s (%s): %v: %s", tr.State, tr.Error, err, tr.Document)
	}
	if c := td.TCPConnect; c.Attempts != 5 || c.Connected != 5 || c.Addr != net.JoinHostPort(target.String(), fmt.Sprint(port)) {
		t.Fatalf("tcp-connect run: %+v, want 5 connected to %s:%d", c, target, port)
	}

	// The archive summarises each as its document says: the RTT and
	// handshake percentiles, and the loss.
	if s := pr.Summary; s.ProbeP99us == nil || *s.ProbeP99us != pd.Ping.RTT.P99 || s.LostPercent == nil || *s.LostPercent != pd.Ping.LossPercent {
		t.Errorf("ping run's summary: p99 %v µs, loss %v; its document's %v and %v", s.ProbeP99us, s.LostPercent, pd.Ping.RTT.P99, pd.Ping.LossPercent)
	}
	if s := tr.Summary; s.ProbeP99us == nil || *s.ProbeP99us != td.TCPConnect.Connect.P99 || s.LostPercent == nil || *s.LostPercent != 0 {
		t.Errorf("tcp-connect run's summary: p99 %v µs, loss %v; its document's p99 %v and no failure", s.ProbeP99us, s.LostPercent, td.TCPConnect.Connect.P99)
	}

	// wireperf table pivots them by protocol.
	tab := exec.Command(bin, "table", "--db", db, "--host", "b", "--rows", "proto", "--value", "probe_p99_us", "--stat", "max", "--format", "csv")
	tab.Env = append(os.Environ(), envCLI+"=1")
	out, err := tab.CombinedOutput()
	if err != nil {
		t.Fatalf("table: %v: %s", err, out)
	}
	for _, row := range []string{"icmp,", "tcp,"} {
		if !strings.Contains(string(out), "\n"+row) {
			t.Errorf("table has no %s row:\n%s", strings.TrimSuffix(row, ","), out)
		}
	}

	// /metrics and /grid, from inside a's namespace where the daemon listens.
	views := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: "127.0.0.1:9464"}) },
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return a.Dial(ctx, &net.Dialer{}, network, addr)
		}},
	}
	fams := promtest.Scrape(t, views)
	rtt := map[string]float64{}
	for _, m := range fams["wireperf_mesh_rtt_seconds"].GetMetric() {
		if promtest.Label(m, "src") == "a" && promtest.Label(m, "dst") == "b" && promtest.Label(m, "statistic") == "p99" {
			rtt[promtest.Label(m, "test")] = m.GetGauge().GetValue()
		}
	}
	// The figures pass through time.Duration (whole nanoseconds) on the
	// way: within 2 ns of the document's.
	if got, want := rtt["echo"], pd.Ping.RTT.P99/1e6; math.Abs(got-want) > 2e-9 {
		t.Errorf("echo's RTT p99 on /metrics %v s, its document's %v", got, want)
	}
	if got, want := rtt["handshake"], td.TCPConnect.Connect.P99/1e6; math.Abs(got-want) > 2e-9 {
		t.Errorf("handshake's p99 on /metrics %v s, its document's %v", got, want)
	}
	loss := 0
	for _, m := range fams["wireperf_mesh_loss_ratio"].GetMetric() {
		if promtest.Label(m, "src") == "a" && promtest.Label(m, "dst") == "b" && m.GetGauge().GetValue() == 0 {
			loss++
		}
	}
	if loss != 2 {
		t.Errorf("%d loss series of 0 from a to b, want echo's and handshake's", loss)
	}
	ended := map[string]float64{}
	for _, m := range fams["wireperf_mesh_runs_total"].GetMetric() {
		if promtest.Label(m, "outcome") == "finished" {
			ended[promtest.Label(m, "kind")] = m.GetCounter().GetValue()
		}
	}
	if ended["ping"] < 1 || ended["tcp-connect"] < 1 {
		t.Errorf("runs finished by kind: %v, want ping and tcp-connect counted", ended)
	}
	// b runs no daemon: a column, no row. echo's RTT is past its red
	// threshold of 1 µs; handshake is within both of its.
	page := string(promtest.Get(t, views, "/grid"))
	if !strings.Contains(page, `<th scope="col">b</th>`) || strings.Contains(page, `<th scope="row">b</th>`) {
		t.Errorf("b on the grid: want a column and no row")
	}
	for test, colour := range map[string]string{"echo": "red", "handshake": "green"} {
		_, section, _ := strings.Cut(page, `data-test="`+test+`"`)
		_, cell, _ := strings.Cut(section, `<td data-src="a" data-dst="b">`)
		cell, _, _ = strings.Cut(cell, "</td>")
		if !strings.Contains(cell, `data-colour="`+colour+`"`) {
			t.Errorf("%s's cell a → b: %s, want %s", test, cell, colour)
		}
	}
}
