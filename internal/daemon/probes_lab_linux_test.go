//go:build linux

package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
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
  echo: {test: ping --count 5 --interval 10ms --timeout 1s}
  handshake: {test: tcp-connect --tcp-port %d --count 5 --interval 10ms --timeout 1s}
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
}
