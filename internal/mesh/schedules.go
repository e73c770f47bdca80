package mesh

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// schedule reads one schedule (a test over a group, and how it repeats)
// and checks it as a task of it would be checked.
func (p *parser) schedule(m *Mesh, e yamlfile.Entry) (Schedule, error) {
	s := Schedule{key: e.Key, line: e.Value.Line, column: e.Value.Column}
	at := map[string]*yaml.Node{} // each key's value, for errors about it
	fs, err := p.Mapping(e.Value, e.Key, "group", "test", "repeat", "slip", "random_slip", "start", "until", "max_runs")
	if err != nil {
		return s, err
	}
	for _, f := range fs {
		fk := e.Key + "." + f.Key
		v, err := p.Scalar(f.Value, fk)
		if err != nil {
			return s, err
		}
		at[f.Key] = f.Value
		switch f.Key {
		case "group":
			if _, ok := m.pairs[v]; !ok {
				return s, p.Errorf(f.Value, fk, "unknown group %q", v)
			}
			s.Group = v
		case "test":
			if _, ok := m.Tests[v]; !ok {
				return s, p.Errorf(f.Value, fk, "unknown test %q", v)
			}
			s.Test = v
		case "repeat":
			s.Repeat, err = p.duration(f, fk)
		case "slip":
			s.Slip, err = p.duration(f, fk)
		case "random_slip":
			s.RandomSlip, err = p.duration(f, fk)
		case "start", "until":
			t, perr := time.Parse(time.RFC3339, v)
			if perr != nil {
				return s, p.Errorf(f.Value, fk, "%q: want an RFC 3339 instant such as 2026-03-01T00:00:00Z", v)
			}
			if f.Key == "start" {
				s.Start = t.UTC()
			} else {
				s.Until = t.UTC()
			}
		case "max_runs":
			n, perr := strconv.Atoi(v)
			if perr != nil || n < 0 {
				return s, p.Errorf(f.Value, fk, "%q: want a count", v)
			}
			s.MaxRuns = n
		}
		if err != nil {
			return s, err
		}
	}
	switch {
	case s.Group == "":
		return s, p.Errorf(e.Value, e.Key+".group", "missing")
	case s.Test == "":
		return s, p.Errorf(e.Value, e.Key+".test", "missing")
	}
	if s.Start.IsZero() {
		// Aligned to the epoch: every host's runs fall on the same
		// instants, and the file says the same thing each time it is read.
		s.Start = time.Unix(0, 0).UTC()
	}
	// The rules a task checks, reported at the schedule's line.
	probe := schedule.Task{Name: s.Test, Source: "a", Dest: "b", Args: []string{"client"}, Duration: time.Second,
		Start: s.Start, Repeat: s.Repeat, Slip: s.Slip, RandomSlip: s.RandomSlip, Until: s.Until, MaxRuns: s.MaxRuns}
	if err := probe.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), ":")
		key = strings.ReplaceAll(key, "-", "_")
		n := at[key]
		if n == nil {
			n = e.Value
		}
		return s, p.Errorf(n, e.Key+"."+key, "%s", strings.TrimSpace(strings.TrimPrefix(err.Error(), key+":")))
	}
	if s.Repeat > 0 && m.Tests[s.Test].Reserve > s.Repeat {
		return s, p.Errorf(at["repeat"], e.Key+".repeat", "%v is shorter than one run of %s (%v)", s.Repeat, s.Test, m.Tests[s.Test].Reserve)
	}
	if sm := m.sampled[s.Group]; sm != nil {
		// A pair of a sampled group runs once every rotation periods.
		switch {
		case s.Repeat == 0:
			return s, p.Errorf(e.Value, e.Key+".repeat", "missing: group %s is sampled, so its pairs take turns period by period", s.Group)
		case s.Repeat > maxTaskRepeat/time.Duration(sm.rotation):
			return s, p.Errorf(at["repeat"], e.Key+".repeat", "%v × the %d periods group %s takes to cover its pairs is over %v", s.Repeat, sm.rotation, s.Group, maxTaskRepeat)
		}
	}
	return s, nil
}

// maxTaskRepeat bounds a sampled pair's repeat (the schedule's × its
// group's rotation), far from a time.Duration's overflow.
const maxTaskRepeat = 100 * 366 * 24 * time.Hour
