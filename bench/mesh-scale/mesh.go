package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/mesh"
	"github.com/wireperf/wireperf/internal/schedule"
)

// origin is the harness's tasks' origin in the archive, as a mesh file's
// name is for `mesh apply`.
const origin = "mesh-scale"

// The mesh the issue asks for: every host probes 4 sampled partners'
// latency every minute (background), and tests its throughput to 1
// sampled partner every 10 minutes (exclusive, 10 s). Each is a sampled
// group of the mesh file meshFile writes, whose partners rotate period
// by period as `mesh apply` stores them.
var (
	probeTest = testSpec{group: "sampled-4", name: "latency", args: []string{"rr", "-t", "5"},
		class: schedule.Background, repeat: time.Minute, slip: 30 * time.Second, partners: 4}
	throughputTest = testSpec{group: "sampled-1", name: "throughput", args: []string{"client", "-t", "10"},
		class: schedule.Exclusive, repeat: 10 * time.Minute, slip: time.Minute, partners: 1}
)

type testSpec struct {
	group, name string
	args        []string
	class       schedule.Class
	repeat      time.Duration
	slip        time.Duration
	partners    int // sampled partners per host and period
}

// hostName is virtual host i's name.
func hostName(i int) string { return fmt.Sprintf("vh%04d", i) }

// groupName is a test's sampled group for draw: the draw is in the
// group's name, which (with the mesh's and the hosts') orders the hosts
// for sampling, so another draw gives other partners.
func (ts testSpec) groupName(draw uint64) string { return fmt.Sprintf("%s-draw%d", ts.group, draw) }

// meshFile is the mesh file of n hosts, their two sampled groups and
// schedules from start until until: the harness's schedule, written as a
// user would write it. probeSlip is the probes' random_slip (0: none).
func meshFile(n int, draw uint64, start, until time.Time, probeSlip time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nhosts:\n", origin)
	names := make([]string, n)
	for i := range n {
		names[i] = hostName(i)
		fmt.Fprintf(&b, "  %s:\n", names[i])
	}
	b.WriteString("groups:\n")
	fmt.Fprintf(&b, "  %s: {sampled: {hosts: [%s], partners: %d}}\n", probeTest.groupName(draw), strings.Join(names, ", "), probeTest.partners)
	fmt.Fprintf(&b, "  %s: {sampled: {hosts: [%s], partners: %d}}\n", throughputTest.groupName(draw), probeTest.groupName(draw), throughputTest.partners)
	b.WriteString("tests:\n")
	for _, ts := range []testSpec{probeTest, throughputTest} {
		fmt.Fprintf(&b, "  %s: {test: %s, class: %s}\n", ts.name, strings.Join(ts.args, " "), ts.class)
	}
	b.WriteString("schedules:\n")
	for _, ts := range []testSpec{probeTest, throughputTest} {
		fmt.Fprintf(&b, "  - {group: %s, test: %s, repeat: %v, slip: %v, start: %s, until: %s",
			ts.groupName(draw), ts.name, ts.repeat, ts.slip, start.UTC().Format(time.RFC3339Nano), until.UTC().Format(time.RFC3339Nano))
		if ts.class == schedule.Background && probeSlip > 0 {
			fmt.Fprintf(&b, ", random_slip: %v", probeSlip)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// meshTasks are the tasks of n hosts, from start until until: those
// `mesh apply` stores for meshFile's mesh (sampled groups as rotating
// tasks, exclusive runs in rounds over their period, background runs on
// the period unless probeSlip gives them a random_slip). The same draw
// gives the same tasks.
func meshTasks(n int, draw uint64, start, until time.Time, probeSlip time.Duration) ([]*schedule.Task, error) {
	if n < 2 {
		return nil, fmt.Errorf("-hosts %d: want at least 2", n)
	}
	m, err := mesh.Parse(origin+".yaml", []byte(meshFile(n, draw, start, until, probeSlip)))
	if err != nil {
		return nil, err
	}
	if _, err := m.CheckUtilisation(); err != nil { // as `mesh apply` refuses an overfull mesh
		return nil, err
	}
	return m.Tasks(), nil
}

// noopTest is a virtual host's test: it "runs" for the test's own
// length, then returns a synthetic -J document that the archive reads as
// it reads a real one.
func noopTest(ctx context.Context, t *schedule.Task) ([]byte, error) {
	def, err := measure.ParseLine(t.Args)
	if err != nil {
		return nil, err
	}
	length, ok := def.Duration()
	if !ok {
		return nil, fmt.Errorf("test %q: its length can't be told from its flags", t.Name)
	}
	began := time.Now()
	tm := time.NewTimer(length)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return syntheticDocument(t, began, length)
}

// syntheticDocument is a minimal -J document for t's test: an rr
// document with its round-trip times for rr, else a client document with
// its length and a goodput. The figures are the pair's own, the same on
// every run, so that a grid drawn from them is stable.
func syntheticDocument(t *schedule.Task, began time.Time, length time.Duration) ([]byte, error) {
	h := fnv.New64a()
	h.Write([]byte(t.Source + "\x00" + t.Dest))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h.Sum64())
	frac := float64(binary.BigEndian.Uint32(b[:4])) / (1 << 32) // [0, 1) per pair
	secs := length.Seconds()
	if len(t.Args) > 0 && t.Args[0] == "rr" {
		rttUs := 200 + frac*20000 // 0.2 to 20 ms
		sent := int64(secs * 1000)
		host := func(name string) map[string]any {
			return map[string]any{"hostname": name, "system": "mesh-scale virtual host", "version": "mesh-scale"}
		}
		return json.Marshal(map[string]any{"kind": "rr", "result": map[string]any{
			"started_at": began.UTC(), "connect_host": t.Dest,
			"local": map[string]any{"role": "client", "host": host(t.Source), "rr": map[string]any{"points": []any{map[string]any{
				"request_size": 1, "lost": 0, "sent": sent,
				"rtt_us": map[string]float64{"min": rttUs, "mean": rttUs * 1.1, "p50": rttUs * 1.05, "p99": rttUs * 1.5},
			}}}},
			"remote": map[string]any{"role": "server", "host": host(t.Dest)},
		}})
	}
	bps := 100e6 + frac*900e6 // 100 Mb/s to 1 Gb/s
	bytes := int64(bps * secs / 8)
	sum := func(sender bool) map[string]any {
		return map[string]any{"start": 0, "end": secs, "seconds": secs, "bytes": bytes, "bits_per_second": bps, "sender": sender}
	}
	return json.Marshal(map[string]any{
		"start": map[string]any{"version": "mesh-scale", "timestamp": map[string]int64{"timesecs": began.Unix()},
			"connecting_to": map[string]any{"host": t.Dest},
			"test_start":    map[string]any{"protocol": "TCP", "num_streams": 1, "duration": secs}},
		"end": map[string]any{"sum_sent": sum(true), "sum_received": sum(false)},
	})
}
