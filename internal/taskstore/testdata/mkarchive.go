//go:build ignore

// mkarchive writes main-c906129.db, the archive that TestArchiveFromMain
// opens: runs, a campaign, a path, tasks, planned runs and reservations,
// written by wireperf's main at commit c906129 (schema version 9), the
// last before the schedule's state left archive.Store. It calls that
// commit's API, so it builds only there:
//
//	git worktree add /tmp/wp-c906129 c906129
//	cd /tmp/wp-c906129 && go run internal/taskstore/testdata/mkarchive.go OUT.db
//
// (this file was written into that tree and run there).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/schedule"
)

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

func main() {
	ctx := context.Background()
	s, err := archive.Open(ctx, os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if _, err := s.PutCampaign(ctx, archive.Campaign{Name: "grid", Spec: "name: grid\n", SpecFormat: "yaml", ShuffleKey: 7}); err != nil {
		log.Fatal(err)
	}
	stream := 1
	for i, id := range []string{"c0ffee0000000001", "c0ffee0000000002"} {
		start := t0.Add(time.Duration(i) * time.Hour)
		r := &archive.Run{ID: id, PointKey: "parallel=4", Rep: i, Seq: i, State: archive.StateFinished,
			Source: archive.SourceNative, ToolVersion: "v9", Cmdline: "wireperf client b -P 4",
			LocalHost: "a", RemoteHost: "b", LocalKernel: "Linux a 6.1", RemoteKernel: "Linux b 6.2",
			Started: start, Ended: start.Add(10 * time.Second), Document: []byte("{\"start\": {}}\n"), DocumentFormat: archive.FormatJSON,
			Axes: map[string]archive.Axis{"parallel": {Num: f64(4), Label: "4"}, "direction": {Label: "up"}},
			Summary: archive.Summary{Seconds: f64(10), SentBytes: i64(1e9), ReceivedBytes: i64(999e6), SentBps: f64(8e8),
				ReceivedBps: f64(7.99e8 + float64(i)), Retransmits: i64(12), MinRTTms: f64(0.1), MeanRTTms: f64(0.25),
				Figures: map[string]float64{archive.FigureSndbufGranted: 425984}},
			Intervals: []archive.Interval{{Index: 0, Stream: &stream, SenderRole: "client", Start: 0, End: 1, Bytes: i64(100), BitsPerSecond: f64(800)}},
			Hosts:     []archive.HostSample{{Host: "local", T: 10, CPUUser: f64(1.5), CPUSys: f64(20), CPUSoftIRQ: f64(7), MemUsed: i64(1 << 30)}},
			Limits:    []archive.HostLimits{{Host: "local", Hostname: "a", Kernel: "Linux a 6.1", Limits: `{"rmem_max":4194304}`}},
		}
		if i == 0 {
			r.Campaign = "grid"
		}
		if err := s.PutRun(ctx, r); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.PutPath(ctx, &archive.Path{RunID: "c0ffee0000000002", Source: "a", Dest: "b", Test: "path", At: t0.Add(time.Hour),
		Hops: []string{"10.0.0.1", "10.0.0.2"}, Reached: true}); err != nil {
		log.Fatal(err)
	}
	tasks := []*schedule.Task{
		{ID: schedule.DefineID("m.yaml", "tput", "a", "b"), Name: "tput", Source: "a", Dest: "b", DestAddr: "b:5201",
			Args: []string{"client", "-t", "5"}, Class: schedule.Exclusive, Duration: 10 * time.Second, Start: t0,
			Repeat: time.Minute, Slip: 5 * time.Second, Origin: "m.yaml", Group: "all", Resources: []string{"a/eth0", "b/eth0"},
			Thresholds: schedule.Thresholds{GoodputAmberBps: 500e6, GoodputRedBps: 100e6, StaleIntervals: 2}},
		{ID: schedule.DefineID("m.yaml", "rr", "b", "a"), Name: "rr", Source: "b", Dest: "a", DestAddr: "a",
			Args: []string{"rr", "-t", "2"}, Class: schedule.Background, Duration: 5 * time.Second, Start: t0,
			Repeat: 2 * time.Minute, Until: t0.Add(24 * time.Hour), MaxRuns: 100, Origin: "m.yaml", Group: "all",
			Dests: []schedule.Destination{{Host: "a", Addr: "a"}, {Host: "c", Addr: "c:5201", At: time.Minute}}},
	}
	if _, err := s.ApplyTasks(ctx, "m.yaml", tasks, t0); err != nil {
		log.Fatal(err)
	}
	var runs []*archive.SchedRun
	for _, t := range tasks {
		toRun, _ := schedule.Plan(t, -1, t0, 5*time.Minute)
		for _, r := range toRun {
			runs = append(runs, archive.NewSchedRun(t, r))
		}
	}
	if _, err := s.PlanRuns(ctx, runs, t0); err != nil {
		log.Fatal(err)
	}
	r0 := runs[0]
	if err := s.Reserve(ctx, []schedule.Reservation{{Resource: "a/eth0", From: r0.Planned, To: r0.Planned.Add(10 * time.Second), RunID: r0.ID, Class: schedule.Exclusive}}); err != nil {
		log.Fatal(err)
	}
	if ok, err := s.Transition(ctx, r0.ID, []string{archive.StateScheduled}, archive.StateRunning, "", r0.Planned.Add(time.Second), time.Time{}, t0); !ok || err != nil {
		log.Fatal("running ", err)
	}
	if ok, err := s.Transition(ctx, r0.ID, []string{archive.StateRunning}, archive.StateFinished, "", time.Time{}, r0.Planned.Add(9*time.Second), t0); !ok || err != nil {
		log.Fatal("finished ", err)
	}
	if err := s.Release(ctx, r0.ID, r0.Planned.Add(9*time.Second)); err != nil {
		log.Fatal(err)
	}
	r1 := runs[1]
	if ok, err := s.Transition(ctx, r1.ID, []string{archive.StateScheduled}, archive.StateMissed, "late", time.Time{}, time.Time{}, t0); !ok || err != nil {
		log.Fatal("missed ", err)
	}
	fmt.Println(len(runs), "planned runs")
}
