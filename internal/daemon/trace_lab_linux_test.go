//go:build linux

package daemon_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/lab"
)

// The path lab: a reaches b through r1, which can also send b's traffic
// one hop further round, through r2. A daemon on a runs a trace test to
// b every 3 s; once it has recorded the direct path, r1's route to b is
// changed to go through r2, and the archive must record the longer path
// as a change, which /metrics counts.
//
//	a ── r1 ── b
//	      │    │
//	      r2 ──┘
func TestLabTracePathChange(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the path lab needs root for its network namespaces and raw ICMP sockets")
	}
	topo := lab.Topology{
		Hosts:      []string{"a", "r1", "r2", "b"},
		Forwarders: []string{"r1", "r2"},
		// b's first link is to r1: its default route, and so its answers,
		// go through r1 whichever way a's probes came.
		Links: []lab.Link{{A: "a", B: "r1"}, {A: "r1", B: "b"}, {A: "r1", B: "r2"}, {A: "r2", B: "b"}},
		// Answers come back another way than the probes went after the
		// change: no host may drop them for that.
		Sysctls: map[string]string{"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.conf.default.rp_filter": "0"},
	}
	// Before the lab exists its addresses are not known; the routes r2
	// needs (to b's r1-side address, and back to a) are added after.
	l := lab.New(t, topo)
	a, r1, r2, b := l.Host("a"), l.Host("r1"), l.Host("r2"), l.Host("b")
	target := b.AddrOn("r1")
	for _, rt := range []struct {
		host string
		to   netip.Addr
		via  string
	}{{"r2", target, "b"}, {"r2", a.AddrOn("r1"), "r1"}} {
		if err := l.SetRoute(rt.host, netip.PrefixFrom(rt.to, 32), rt.via); err != nil {
			t.Fatal(err)
		}
	}
	direct := []string{r1.AddrOn("a").String(), target.String()}
	around := []string{r1.AddrOn("a").String(), r2.AddrOn("r1").String(), target.String()}

	dir := t.TempDir()
	db := filepath.Join(dir, "archive.db")
	meshFile := filepath.Join(dir, "mesh.yaml")
	os.WriteFile(meshFile, []byte(fmt.Sprintf(`name: pathlab
hosts: {a: {addr: %s}, b: {addr: %s}}
groups: {ab: {pairs: [[a, b]]}}
tests:
  path: {test: trace --max-hops 4 --probes 2 --probe-timeout 250ms}
schedules:
  - {group: ab, test: path, repeat: 3s, slip: 2s}
`, a.Addr, target)), 0o644)
	bin, _ := os.Executable()
	apply := exec.Command(bin, "mesh", "apply", "-f", meshFile, "--db", db)
	apply.Env = append(os.Environ(), envCLI+"=1")
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("mesh apply: %v: %s", err, out)
	}
	cfg := filepath.Join(dir, "a.yaml")
	const listen = "127.0.0.1:9464" // inside a's namespace: nothing else listens there
	os.WriteFile(cfg, []byte(fmt.Sprintf("host: a\nlisten: %s\nport: 0\ngrace: 5s\nplan_every: 1s\nhorizon: 30s\nlog_file: %s\n",
		listen, filepath.Join(dir, "a.log"))), 0o644)
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
	// waitPath waits for a path of a→b that ok accepts, and returns it.
	waitPath := func(what string, ok func(archive.Path) bool) archive.Path {
		t.Helper()
		deadline := time.Now().Add(45 * time.Second)
		for time.Now().Before(deadline) {
			paths, err := st.Paths(ctx, archive.PathFilter{Source: "a", Dest: "b", Test: "path"})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				if ok(p) {
					return p
				}
			}
			time.Sleep(250 * time.Millisecond) // bounded poll: the archive, until the deadline above
		}
		paths, _ := st.Paths(ctx, archive.PathFilter{Source: "a", Dest: "b"})
		t.Fatalf("no %s within 45 s; paths recorded: %+v", what, paths)
		return archive.Path{}
	}
	first := waitPath("direct path", func(p archive.Path) bool { return slices.Equal(p.Hops, direct) && p.Reached })
	if first.Changed {
		t.Fatalf("the first path counted as a change: %+v", first)
	}
	if got := pathChanges(t, a); got != "0" {
		t.Fatalf("before the change: path changes %q, want 0", got)
	}
	if err := l.SetRoute("r1", netip.PrefixFrom(target, 32), "r2"); err != nil {
		t.Fatal(err)
	}
	// The first path after the direct one that is not direct: a run
	// under way as the route changed may be the one that sees it first,
	// and its time (its start) is then before the change (a clean-clone
	// run's change was on such a run, and the next, after the change,
	// rightly recorded no change).
	p := waitPath("path through r2", func(p archive.Path) bool {
		return p.At.After(first.At) && !slices.Equal(p.Hops, direct)
	})
	if !slices.Equal(p.Hops, around) {
		t.Fatalf("the first path after the direct one is not through r2: %+v", p)
	}
	if !p.Changed || !slices.Equal(p.Prev, direct) {
		t.Fatalf("the path through r2 is not recorded as a change from the direct one: %+v", p)
	}
	counts, err := st.PathChanges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[archive.PathPair{Source: "a", Dest: "b", Test: "path"}]; n != 1 {
		t.Fatalf("the archive counts %d changes, want 1: %v", n, counts)
	}
	// The daemon counts the change once the archive has stored it: the
	// counter may follow the row by a moment.
	for deadline := time.Now().Add(10 * time.Second); ; {
		got := pathChanges(t, a)
		if got == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the change: path changes %q, want 1", got)
		}
		time.Sleep(100 * time.Millisecond) // bounded poll: the daemon's counter, until the deadline above
	}
	t.Logf("path %v became %v at %s", direct, around, p.At.Format(time.RFC3339Nano))
}

// pathChanges is a→b's path change counter as a's daemon's /metrics
// shows it, read from inside a's namespace.
func pathChanges(t *testing.T, a *lab.Host) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return a.Dial(ctx, nil, network, addr)
		},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://127.0.0.1:9464/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `wireperf_mesh_path_changes_total{dst="b",src="a",test="path"} `) {
			return strings.Fields(line)[1]
		}
	}
	return "missing"
}
