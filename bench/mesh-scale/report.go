package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Report is what a simulation saw.
type Report struct {
	Hosts   int       `json:"hosts"`
	Tasks   int       `json:"tasks"`
	Minutes float64   `json:"minutes"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`

	Runs     int `json:"runs"`     // planned in [start, end)
	Expected int `json:"expected"` // the runs the tasks give in [start, end)
	// DaemonErrors are the daemons that stopped before the end, with why.
	DaemonErrors []string       `json:"daemon_errors"`
	States       map[string]int `json:"states"`
	// Lag is start − planned start of the runs that started, all and by
	// test (a run that waited for its hosts counts its wait).
	Lag            []LagFigures `json:"lag"`
	WaitedForHosts int          `json:"waited_for_hosts"`
	ExclusiveRuns  int          `json:"exclusive_runs"`
	Overlaps       []string     `json:"overlaps"`
	// Unsuccessful are the missed, failed and aborted runs by reason.
	Unsuccessful  []reasonCount `json:"unsuccessful"`
	WithoutReason int           `json:"without_reason"`
	LeftOpen      int           `json:"left_open"` // still scheduled or running when the harness stopped

	PostgreSQL pgFigures `json:"postgresql"`
	// Cost is the database's work per finished run in the steady state.
	Cost      runCost        `json:"cost"`
	PgBouncer *poolerFigures `json:"pgbouncer,omitempty"` // nil: the daemons connected directly
	// QueueMaintainers is how many daemons took part in River's leader
	// election.
	QueueMaintainers int            `json:"queue_maintainers"`
	Harness          harnessFigures `json:"harness"`
}

// LagFigures are one set of runs' lags, in seconds.
type LagFigures struct {
	Test string  `json:"test"`
	Runs int64   `json:"runs"`
	P50  float64 `json:"p50_s"`
	P99  float64 `json:"p99_s"`
	Max  float64 `json:"max_s"`
}

type reasonCount struct {
	State   string `json:"state"`
	Kind    string `json:"kind"`
	Runs    int    `json:"runs"`
	Example string `json:"example"`
}

type poolerFigures struct {
	PoolSize   int     `json:"pool_size"`   // its server connections, at most
	CPUSeconds float64 `json:"cpu_seconds"` // -1: unknown
	CPUPercent float64 `json:"cpu_percent"` // of one core; -1: unknown
}

type harnessFigures struct {
	CPUSeconds float64 `json:"cpu_seconds"` // -1: unknown
	CPUPercent float64 `json:"cpu_percent"` // of one core; -1: unknown
	PeakRSSMiB float64 `json:"peak_rss_mib"`
}

func known(v float64, format string) string {
	if v < 0 {
		return "unknown"
	}
	return fmt.Sprintf(format, v)
}

// Markdown writes the report as Markdown tables.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "## mesh-scale: %d hosts, %g minutes (%s to %s UTC)\n\n", r.Hosts, r.Minutes,
		r.Start.Format("2006-01-02 15:04:05"), r.End.Format("15:04:05"))
	states := make([]string, 0, len(r.States))
	for s, n := range r.States {
		states = append(states, fmt.Sprintf("%s %d", s, n))
	}
	sort.Strings(states)
	fmt.Fprintf(w, "| figure | value |\n|---|---|\n")
	fmt.Fprintf(w, "| tasks | %d |\n", r.Tasks)
	fmt.Fprintf(w, "| runs planned | %d of %d the tasks give (%s) |\n", r.Runs, r.Expected, strings.Join(states, ", "))
	fmt.Fprintf(w, "| daemons that stopped early | %d |\n", len(r.DaemonErrors))
	for _, l := range r.Lag {
		fmt.Fprintf(w, "| schedule lag, %s (%d runs) | p50 %.3f s, p99 %.3f s, max %.3f s |\n", l.Test, l.Runs, l.P50, l.P99, l.Max)
	}
	fmt.Fprintf(w, "| runs that waited for their hosts | %d |\n", r.WaitedForHosts)
	fmt.Fprintf(w, "| overlaps of exclusive runs | %d (of %d exclusive runs) |\n", len(r.Overlaps), r.ExclusiveRuns)
	fmt.Fprintf(w, "| missed, failed or aborted without a reason | %d |\n", r.WithoutReason)
	fmt.Fprintf(w, "| runs left open | %d |\n", r.LeftOpen)
	pg := r.PostgreSQL
	fmt.Fprintf(w, "| PostgreSQL connections (max, sampled every %v) | %d |\n", sampleEvery, pg.MaxConnections)
	fmt.Fprintf(w, "| PostgreSQL transactions per second | %.1f |\n", pg.TPS)
	fmt.Fprintf(w, "| PostgreSQL transactions per finished run, from the schedule's start | %.2f (of %d runs) |\n", r.Cost.Transactions, r.Cost.Runs)
	if r.Cost.Connections >= 0 {
		fmt.Fprintf(w, "| connections opened per finished run | %.3f |\n", r.Cost.Connections)
	}
	if r.Cost.Statements != nil {
		fmt.Fprintf(w, "| of which begun by a client (BEGIN) | %.2f |\n", r.Cost.Explicit)
		for _, s := range r.Cost.Statements {
			fmt.Fprintf(w, "| statements per run: %s | %.2f |\n", s.Source, s.PerRun)
		}
	} else {
		fmt.Fprintf(w, "| statements per run by source | unknown: the cluster doesn't load pg_stat_statements |\n")
	}
	fmt.Fprintf(w, "| PostgreSQL CPU | %s |\n", cpu(pg.CPUSeconds, pg.CPUPercent))
	if b := r.PgBouncer; b != nil {
		fmt.Fprintf(w, "| PgBouncer (transaction mode) | %d server connections at most; CPU %s |\n", b.PoolSize, cpu(b.CPUSeconds, b.CPUPercent))
	} else {
		fmt.Fprintf(w, "| PgBouncer | none: the daemons connected directly |\n")
	}
	fmt.Fprintf(w, "| daemons in River's leader election | %d |\n", r.QueueMaintainers)
	fmt.Fprintf(w, "| harness CPU | %s |\n", cpu(r.Harness.CPUSeconds, r.Harness.CPUPercent))
	fmt.Fprintf(w, "| harness peak RSS | %s |\n", known(r.Harness.PeakRSSMiB, "%.0f MiB"))
	if len(r.Unsuccessful) > 0 {
		fmt.Fprintf(w, "\n| state | reason | runs | example |\n|---|---|---|---|\n")
		for _, u := range r.Unsuccessful {
			fmt.Fprintf(w, "| %s | %s | %d | %s |\n", u.State, cell(u.Kind), u.Runs, cell(u.Example))
		}
	}
	if len(r.DaemonErrors) > 0 {
		fmt.Fprintf(w, "\nDaemons that stopped early:\n\n")
		for _, e := range r.DaemonErrors {
			fmt.Fprintf(w, "- %s\n", e)
		}
	}
	if len(r.Overlaps) > 0 {
		fmt.Fprintf(w, "\nOverlapping exclusive runs:\n\n")
		for _, o := range r.Overlaps {
			fmt.Fprintf(w, "- %s\n", o)
		}
	}
}

func cpu(secs, pct float64) string {
	if secs < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f s (%.0f%% of one core)", secs, pct)
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
