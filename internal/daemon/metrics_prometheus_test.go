package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/meshmetrics"
	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/testutil/promtest"
)

// monitoringDir is the repository's monitoring/: the rules and the
// dashboard that ship.
var monitoringDir = filepath.Join("..", "..", "monitoring")

// Debian's Prometheus scrapes a daemon that runs real scheduled tests on
// loopback (TCP, UDP, request-response, a trace and one that fails), with
// the shipped rules loaded. Then every rule's expression, every query of
// the shipped dashboard and its variables, and every example query of the
// docs returns series with the labels that the dashboard's legends and
// matrices and the alerts' annotations use: a panel that would be empty
// fails. `promtool check metrics` finds nothing wrong with the scrape.
func TestPrometheusRunsTheRulesAndTheDashboard(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the mesh's trace task needs root (a raw ICMP socket) here")
	}
	promtest.Require(t)
	ctx := context.Background()
	dsn := archivetest.Backends(t)["sqlite"]
	d := newDaemon(t, "a", dsn, true, func(c *daemon.Config) { c.API = "127.0.0.1:0" })
	rules, err := filepath.Abs(filepath.Join(monitoringDir, "wireperf.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	prom := promtest.StartServer(t, []string{d.APIAddr().String()}, []string{rules})

	// Runs from a to b, whose address is this host's server: three of
	// each task, the first 10 s out (a daemon under the race detector on
	// a loaded machine took over 5 s to pick its first runs up).
	first := time.Now().Truncate(time.Second).Add(10 * time.Second)
	task := func(name string, args []string, class schedule.Class, port int) *schedule.Task {
		return &schedule.Task{ID: schedule.DefineID("test", name, "a", "b"), Name: name, Source: "a", Dest: "b",
			DestAddr: fmt.Sprintf("127.0.0.1:%d", port), Args: args, Class: class, Duration: 4 * time.Second,
			Start: first, Repeat: 10 * time.Second, Slip: 9 * time.Second, MaxRuns: 3, Origin: "test"}
	}
	port := d.ServerPort()
	tcp := task("tcp", []string{"client", "-t", "1"}, schedule.Exclusive, port)
	// Each threshold is set on two tests that measure its figure: a run
	// missed under load leaves its pair without figures, and the other
	// test still has them.
	tcp.Thresholds = schedule.Thresholds{GoodputAmberBps: 2e15, GoodputRedBps: 1e15, RTTAmberMs: 100, RTTRedMs: 200}
	udp := task("udp", []string{"client", "-u", "-b", "10m", "-t", "1"}, schedule.Exclusive, port)
	udp.Thresholds = schedule.Thresholds{GoodputAmberBps: 2e15, GoodputRedBps: 1e15, LossAmberPct: 0.5, LossRedPct: 1}
	rr := task("rr", []string{"rr", "-t", "1"}, schedule.Exclusive, port)
	rr.Thresholds = schedule.Thresholds{RTTAmberMs: 100, RTTRedMs: 200, LossAmberPct: 0.5, LossRedPct: 1}
	path := task("path", []string{"trace", "--max-hops", "3", "--probes", "2"}, schedule.Background, port)
	down := task("down", []string{"client", "-t", "1"}, schedule.Exclusive, 1) // nothing listens on port 1: the run fails
	tasks := []*schedule.Task{tcp, udp, rr, path, down}
	for _, tk := range tasks {
		if _, err := d.Schedule().PutTask(ctx, tk, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	stop := start(t, d)
	st, err := archive.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := waitDone(t, st, 3*len(tasks), 180*time.Second)
	states := map[string]int{}
	for _, r := range runs {
		states[r.Test+" "+r.State]++
	}
	t.Logf("runs: %v", states)
	if states["down failed"] == 0 || states["tcp finished"] == 0 || states["path finished"] == 0 {
		t.Fatalf("runs %v: want tcp and path finished and down failed", states)
	}

	// Prometheus has scraped every run's end, and evaluated the rules since.
	scraped := time.Now()
	poll(t, "Prometheus to scrape every run's end", func() (bool, error) {
		got, err := prom.Query(`sum(wireperf_mesh_runs_total{host="a"})`)
		return err == nil && len(got) == 1 && got[0].Value == fmt.Sprint(len(runs)), err
	})
	var loaded []promtest.Rule
	poll(t, "the rules to be evaluated", func() (bool, error) {
		loaded, err = prom.Rules()
		if err != nil || len(loaded) == 0 {
			return false, err
		}
		for _, r := range loaded {
			if r.LastEvaluation.Before(scraped) {
				return false, nil
			}
		}
		return true, nil
	})

	// The scrape itself is clean, as promtool check metrics judges it,
	// but for the names kept one release beside their replacements.
	for line := range strings.Lines(promtest.CheckMetrics(t, get(t, d, "/metrics"))) {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		if name != "" && !slices.Contains(meshmetrics.Deprecated, name) {
			t.Errorf("promtool check metrics: %s", line)
		}
	}

	vars := strings.NewReplacer("$host", "a", "$test", ".*", "$src", "a", "$dst", "b", "$__rate_interval", "1m")
	for _, r := range loaded {
		if r.Health != "ok" {
			t.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
		}
		if r.Type == "recording" {
			expectSeries(t, prom, "recording rule "+r.Name, r.Name, nil)
			continue
		}
		expectSeries(t, prom, "alert "+r.Name, everySeries(r.Query), annotationLabels(r.Annotations))
	}

	var dash dashboard
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "wireperf-dashboard.json"))
	if err == nil {
		err = json.Unmarshal(raw, &dash)
	}
	if err != nil {
		t.Fatal(err)
	}
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			labels := legendLabels(tg.LegendFormat)
			for _, tr := range p.Transformations {
				if tr.ID == "groupingToMatrix" {
					labels = append(labels, tr.Options.RowField, tr.Options.ColumnField)
				}
			}
			expectSeries(t, prom, fmt.Sprintf("panel %q", p.Title), vars.Replace(tg.Expr), labels)
			queries++
		}
	}
	if queries < 10 {
		t.Errorf("the dashboard has %d queries", queries)
	}
	labelValues := regexp.MustCompile(`^label_values\((.+), *(\w+)\)$`)
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is no label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		got, err := prom.LabelValues(m[2], vars.Replace(m[1]))
		if err != nil || len(got) == 0 {
			t.Errorf("variable %s: %s has no values (%v)", v.Name, v.Definition, err)
		}
	}
	if !slices.ContainsFunc(dash.Templating.List, func(v variable) bool { return v.Name == "host" }) {
		t.Error("the dashboard has no host variable")
	}

	// Every example query of the docs.
	docQueries := 0
	for _, doc := range []string{"daemon.md", "metrics.md"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range promQLExamples(string(text)) {
			expectSeries(t, prom, "docs/"+doc, everySeries(q), nil)
			docQueries++
		}
	}
	if docQueries == 0 {
		t.Error("no example query found in docs/daemon.md or docs/metrics.md")
	}
	t.Logf("%d rules, %d dashboard queries, %d example queries of the docs", len(loaded), queries, docQueries)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr         string `json:"expr"`
			LegendFormat string `json:"legendFormat"`
		} `json:"targets"`
		Transformations []struct {
			ID      string `json:"id"`
			Options struct {
				RowField    string `json:"rowField"`
				ColumnField string `json:"columnField"`
			} `json:"options"`
		} `json:"transformations"`
	} `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type variable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Definition string `json:"definition"`
}

// poll asks ready every 250 ms for 60 s.
func poll(t *testing.T, what string, ready func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, err := ready()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 60 s for %s (last error: %v)", what, err)
		}
		time.Sleep(250 * time.Millisecond) // bounded poll: Prometheus's scrapes and evaluations, until the deadline above
	}
}

// expectSeries fails unless expr returns a series, each with labels.
func expectSeries(t *testing.T, prom *promtest.Server, what, expr string, labels []string) {
	t.Helper()
	got, err := prom.Query(expr)
	if err != nil {
		t.Errorf("%s: %s: %v", what, expr, err)
		return
	}
	if len(got) == 0 {
		t.Errorf("%s: %s returns no series", what, expr)
		return
	}
	for _, s := range got {
		for _, l := range labels {
			if s.Metric[l] == "" {
				t.Errorf("%s: %s returns %v, without the label %s", what, expr, s.Metric, l)
			}
		}
	}
}

var (
	// A comparison outside a selector's braces.
	comparison = regexp.MustCompile(`(==|!=|>=|<=|>|<)`)
	legendRef  = regexp.MustCompile(`\{\{ *(\w+) *\}\}`)
	labelsRef  = regexp.MustCompile(`\$labels\.(\w+)`)
)

// everySeries turns expr's comparisons into `bool` ones, so that it
// returns every series it compares rather than those that pass: an alert
// that is not firing still shows that its expression finds the series
// it watches.
func everySeries(expr string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		}
		if depth == 0 {
			if loc := comparison.FindStringIndex(expr[i:]); loc != nil && loc[0] == 0 {
				b.WriteString(expr[i:i+loc[1]] + " bool")
				i += loc[1] - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func legendLabels(legend string) []string {
	var out []string
	for _, m := range legendRef.FindAllStringSubmatch(legend, -1) {
		out = append(out, m[1])
	}
	return out
}

func annotationLabels(annotations map[string]string) []string {
	var out []string
	for _, a := range annotations {
		for _, m := range labelsRef.FindAllStringSubmatch(a, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// promQLExamples are the queries of a Markdown text's promql blocks, one
// a line, comments aside.
func promQLExamples(text string) []string {
	var out []string
	in := false
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		switch {
		case line == "```promql":
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && line != "" && !strings.HasPrefix(line, "#"):
			out = append(out, line)
		}
	}
	return out
}

// Comparisons become bool ones, and a selector's matchers stay as they are.
func TestEverySeriesComparesWithBool(t *testing.T) {
	for in, want := range map[string]string{
		`wireperf_archive_up == 0`: `wireperf_archive_up == bool 0`,
		`a{level="red",x!="y"} < on (test) group_left () max by (test) (b{l=~"r"})`: `a{level="red",x!="y"} < bool on (test) group_left () max by (test) (b{l=~"r"})`,
		`x > 1.5 * y and x - y >= 0.005`:                                            `x > bool 1.5 * y and x - y >= bool 0.005`,
		`sum(rate(x[1h]))`:                                                          `sum(rate(x[1h]))`,
	} {
		if got := everySeries(in); got != want {
			t.Errorf("everySeries(%q) = %q, want %q", in, got, want)
		}
	}
}
