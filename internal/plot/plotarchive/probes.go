package plotarchive

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/plot"
)

// ProbesOf maps the probe runs (ping, tcp-connect) among runs onto the
// probes figure: one series per source → destination and protocol, each
// run's stored p50, p99 and loss at its start. Runs of other kinds, and
// probe runs that did not finish, are left out; none left is an error.
func ProbesOf(runs []*archive.Run, footer plot.Footer) (plot.ProbesInput, error) {
	byPair := map[string]*plot.ProbePair{}
	var names []string
	hosts := map[string]bool{}
	for _, r := range runs {
		if r.State != archive.StateFinished || !r.Summary.IsProbeRun() || r.Started.IsZero() {
			continue
		}
		name := fmt.Sprintf("%s → %s", r.LocalHost, r.RemoteHost)
		if p := r.Axes["proto"].Label; p != "" {
			name += " (" + p + ")"
		}
		pair := byPair[name]
		if pair == nil {
			pair = &plot.ProbePair{Name: name}
			byPair[name] = pair
			names = append(names, name)
		}
		m := r.Summary
		pair.Runs = append(pair.Runs, plot.ProbeRun{At: r.Started, P50us: orNaN(m.ProbeP50us), P99us: orNaN(m.ProbeP99us), LostPercent: orNaN(m.LostPercent)})
		for _, h := range []string{r.LocalHost, r.RemoteHost} {
			if h != "" && !hosts[h] {
				hosts[h] = true
				footer.Hosts = append(footer.Hosts, h)
			}
		}
		if footer.Date.IsZero() || r.Started.Before(footer.Date) {
			footer.Date = r.Started
		}
	}
	if len(names) == 0 {
		return plot.ProbesInput{}, fmt.Errorf("%s: no finished ping or tcp-connect runs to draw", footer.Subject)
	}
	sort.Strings(names)
	in := plot.ProbesInput{Title: "Probes: RTT and loss over time", Footer: footer}
	for _, n := range names {
		p := byPair[n]
		sort.SliceStable(p.Runs, func(i, j int) bool { return p.Runs[i].At.Before(p.Runs[j].At) })
		in.Pairs = append(in.Pairs, *p)
	}
	return in, nil
}

// ProbesSubject names the runs a probes figure draws for its footer.
func ProbesSubject(host, campaign string, since time.Time) string {
	s := "probe runs"
	if campaign != "" {
		s += " of campaign " + campaign
	}
	if host != "" {
		s += " touching " + host
	}
	if !since.IsZero() {
		s += " since " + since.UTC().Format("2006-01-02 15:04 UTC")
	}
	return s
}

func orNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
