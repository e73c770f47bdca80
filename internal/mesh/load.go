package mesh

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/yamlfile"
)

// An exclusive run holds both its hosts for its reservation, so a host
// can take only so many per period: the sum, over the exclusive tasks it
// is the source or the destination of, of their reservation × runs per
// period. Busy time ÷ period is the host's utilisation. Over MaxUtil its
// runs cannot all happen; over WarnUtil they often wait for each other
// and some miss their slip. Background runs overlap anything and don't
// count.
const (
	MaxUtil  = 1.0
	WarnUtil = 0.5
)

// Load is what one schedule's exclusive runs take of one host's time.
type Load struct {
	Schedule string        // GROUP/TEST
	Period   time.Duration // the schedule's repeat
	// Tasks is how many of the schedule's ordered pairs have the host as
	// source or destination; each runs once every Rotation periods (1,
	// or a sampled group's rotation, whose rotating tasks run its pairs
	// in turn).
	Tasks, Rotation int
	Reserve         time.Duration // what each run holds: the test's reserve
	ReserveGiven    bool          // the file's reserve, not the test's length + margin
	key             string        // the schedule's key and position, for errors
	line, column    int
}

// Runs is the schedule's runs per period that hold the host.
func (l Load) Runs() float64 { return float64(l.Tasks) / float64(l.Rotation) }

// Util is the schedule's share of the host's time: busy time ÷ period.
func (l Load) Util() float64 {
	return float64(time.Duration(l.Tasks)*l.Reserve) / float64(time.Duration(l.Rotation)*l.Period)
}

func (l Load) String() string {
	why := "the test's length + " + schedule.ReserveMargin.String() + " margin"
	if l.ReserveGiven {
		why = "the test's reserve"
	}
	runs := strconv.FormatFloat(math.Round(l.Runs()*100)/100, 'f', -1, 64)
	plural := "s"
	if runs == "1" {
		plural = ""
	}
	return fmt.Sprintf("%s run%s of %s every %v, each holding it %v (%s)", runs, plural, l.Schedule, l.Period, l.Reserve, why)
}

// HostLoad is one host's time taken by exclusive runs.
type HostLoad struct {
	Host  string
	Util  float64 // the sum of its schedules' shares: 1 is all of its time
	Loads []Load  // per schedule that holds it, in the file's order
}

// Details are the schedules that make the load, one after the other.
func (h HostLoad) Details() string {
	parts := make([]string, len(h.Loads))
	for i, l := range h.Loads {
		parts[i] = l.String()
	}
	return strings.Join(parts, "; ")
}

// Utilisation is each host's time taken by the exclusive runs of the
// schedules that repeat, worst first (then by name). Hosts that no
// exclusive run holds are left out. It is a pure function of the file,
// computed from the groups' pairs without expanding them into tasks.
func (m *Mesh) Utilisation() []HostLoad {
	byHost := map[string]*HostLoad{}
	for _, s := range m.Schedules {
		t := m.Tests[s.Test]
		if t.Class != schedule.Exclusive || s.Repeat <= 0 {
			continue
		}
		rotation := 1
		tasks := map[string]int{}
		if sm := m.sampled[s.Group]; sm != nil {
			rotation = sm.rotation
			for host, n := range sm.runsHolding() {
				tasks[host] = n
			}
		} else {
			for _, pr := range m.pairs[s.Group] {
				tasks[pr.Source]++
				tasks[pr.Dest]++
			}
		}
		for host, n := range tasks {
			h := byHost[host]
			if h == nil {
				h = &HostLoad{Host: host}
				byHost[host] = h
			}
			h.Loads = append(h.Loads, Load{Schedule: s.Group + "/" + s.Test, Period: s.Repeat, Tasks: n, Rotation: rotation,
				Reserve: t.Reserve, ReserveGiven: t.ReserveGiven, key: s.key, line: s.line, column: s.column})
		}
	}
	out := make([]HostLoad, 0, len(byHost))
	for _, h := range byHost {
		for _, l := range h.Loads {
			h.Util += l.Util()
		}
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Util != out[j].Util {
			return out[i].Util > out[j].Util
		}
		return out[i].Host < out[j].Host
	})
	return out
}

// CheckUtilisation refuses a mesh whose worst host would be busy more
// than MaxUtil of the time, with a *yamlfile.Error at the schedule that takes
// most of it, naming the host and its utilisation; over WarnUtil it
// accepts the mesh with a warning of one line.
func (m *Mesh) CheckUtilisation() (warning string, err error) {
	for _, t := range m.Tests {
		if len(t.Args) > 0 && schedule.IsProbe(t.Args[0]) {
			if err := schedule.CheckProbeRates(m.Tasks()); err != nil {
				return "", &yamlfile.Error{File: m.file, Line: 1, Key: "schedules", Msg: err.Error()}
			}
			break
		}
	}
	loads := m.Utilisation()
	if len(loads) == 0 || loads[0].Util <= WarnUtil {
		return "", nil
	}
	worst := loads[0]
	top := worst.Loads[0]
	for _, l := range worst.Loads[1:] {
		if l.Util() > top.Util() {
			top = l
		}
	}
	e := &yamlfile.Error{File: m.file, Line: top.line, Column: top.column, Key: top.key}
	if worst.Util > MaxUtil {
		e.Msg = fmt.Sprintf("host %s would be busy %s of the time with exclusive runs, over %s: %s; sample partners (a sampled group) or repeat less often",
			worst.Host, percent(worst.Util), percent(MaxUtil), worst.Details())
		return "", e
	}
	e.Msg = fmt.Sprintf("host %s is busy %s of the time with exclusive runs, over %s: %s; its runs will often wait for each other",
		worst.Host, percent(worst.Util), percent(WarnUtil), worst.Details())
	return e.Error(), nil
}

// UtilisationReport is each host's utilisation, a line each, worst
// first, under a heading: what `mesh apply --dry-run` prints.
func (m *Mesh) UtilisationReport() string {
	loads := m.Utilisation()
	var b strings.Builder
	if len(loads) == 0 {
		b.WriteString("utilisation: no exclusive runs that repeat\n")
		return b.String()
	}
	b.WriteString("utilisation of each host by exclusive runs (busy time ÷ period), worst first:\n")
	for _, h := range loads {
		fmt.Fprintf(&b, "%s %s: %s\n", h.Host, percent(h.Util), h.Details())
	}
	return b.String()
}

func percent(u float64) string { return strconv.FormatFloat(u*100, 'f', 1, 64) + "%" }
