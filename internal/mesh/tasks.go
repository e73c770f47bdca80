package mesh

import (
	"slices"
	"sort"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
)

// Pairs are a group's ordered pairs (a sampled group's, made here: all
// of them, over its rotation).
func (m *Mesh) Pairs(group string) []Pair {
	if sm := m.sampled[group]; sm != nil {
		return sm.pairs()
	}
	return m.pairs[group]
}

// Tasks expands the mesh into tasks: one per schedule and ordered pair,
// with IDs from the file's name, the schedule and the pair; over a
// sampled group, one rotating task per schedule, source and slot, whose
// runs go to its partners in their turns (sampled.go).
func (m *Mesh) Tasks() []*schedule.Task {
	n := 0
	for _, s := range m.Schedules {
		if sm := m.sampled[s.Group]; sm != nil {
			n += sm.tasks()
		} else {
			n += len(m.pairs[s.Group])
		}
	}
	out := make([]*schedule.Task, 0, n)
	endpoints := make(map[string]string, len(m.Hosts))
	for name, h := range m.Hosts {
		endpoints[name] = h.Endpoint()
	}
	for _, s := range m.Schedules {
		t := m.Tests[s.Test]
		// One test's tasks share its words (clipped: an append copies).
		args := slices.Clip(t.Args)
		// and its test, parsed once when the file was read.
		test := t.test
		// task is the schedule's task from source to dest; its ID names
		// the pair, or (key) a sampled group's source and slot.
		task := func(source, dest, key string) *schedule.Task {
			tk := &schedule.Task{
				ID:   schedule.DefineID(m.Name, s.Group+"/"+s.Test, source, key),
				Name: s.Test, Source: source, Dest: dest, DestAddr: endpoints[dest],
				Args: args, Class: t.Class, Duration: t.Reserve,
				Start: s.Start, Repeat: s.Repeat, Slip: s.Slip, RandomSlip: s.RandomSlip, Until: s.Until, MaxRuns: s.MaxRuns,
				Origin: m.Name, Group: s.Group, Thresholds: t.Thresholds,
			}
			tk.SetTest(test)
			return tk
		}
		if sm := m.sampled[s.Group]; sm != nil {
			out = append(out, sm.scheduleTasks(s, t, endpoints, task)...)
			continue
		}
		pairs := m.pairs[s.Group]
		for i, pr := range pairs {
			tk := task(pr.Source, pr.Dest, pr.Dest)
			// Exclusive runs of one schedule are spread evenly over its
			// period rather than all planned at one instant, where all but
			// one would wait for the others.
			if t.Class == schedule.Exclusive && s.Repeat > 0 {
				tk.Start = tk.Start.Add(time.Duration(i) * (s.Repeat / time.Duration(len(pairs))).Truncate(time.Millisecond))
			}
			out = append(out, tk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
