package archive

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// SummaryColumns are the summary values by their names in JSON and on
// the command line, with their units, then the figures kept beside them.
var SummaryColumns = append([]column{
	{"received_bits_per_second", "bits/s"},
	{"sent_bits_per_second", "bits/s"},
	{"retransmits", ""},
	{"lost_percent", "%"},
	{"jitter_ms", "ms"},
	{"min_rtt_ms", "ms"},
	{"mean_rtt_ms", "ms"},
	{"rr_p50_us", "us"},
	{"rr_p99_us", "us"},
	{"probe_p50_us", "us"},
	{"probe_p99_us", "us"},
	{"out_of_order", "datagrams"},
	{"seconds", "s"},
	{"sent_bytes", "bytes"},
	{"received_bytes", "bytes"},
}, figureColumns...)

type column = struct{ Name, Unit string }

// figureColumns are the figures kept in Summary.Figures: CPU in percent
// of one core, as iperf3 reports it; the probes' (probedoc.go) and an
// RRUL run's (rruldoc.go) last.
var figureColumns = append([]column{
	{FigureCPULocalUser, "%"},
	{FigureCPULocalSystem, "%"},
	{FigureCPULocalTotal, "%"},
	{FigureCPURemoteUser, "%"},
	{FigureCPURemoteSystem, "%"},
	{FigureCPURemoteTotal, "%"},
	{FigureSndbufGranted, "bytes"},
	{FigureRcvbufGranted, "bytes"},
	{FigureSpacingAchieved, "us"},
	{FigureSpacingAchievedP99, "us"},
	{FigureRSSLocalPeak, "bytes"},
	{FigureRSSRemotePeak, "bytes"},
	{FigureHostCPULocalMean, "%"},
	{FigureHostCPULocalMax, "%"},
	{FigureHostCPURemoteMean, "%"},
	{FigureHostCPURemoteMax, "%"},
	{FigureHostMemLocalPeak, "bytes"},
	{FigureHostMemRemotePeak, "bytes"},
}, append(probeFigureColumns, rrulFigureColumns...)...)

// The names of the figures kept in Summary.Figures.
const (
	FigureCPULocalUser    = "cpu_local_user"
	FigureCPULocalSystem  = "cpu_local_system"
	FigureCPULocalTotal   = "cpu_local_total"
	FigureCPURemoteUser   = "cpu_remote_user"
	FigureCPURemoteSystem = "cpu_remote_system"
	FigureCPURemoteTotal  = "cpu_remote_total"
	// The socket buffers the kernel granted: the sending sockets' send
	// buffer and the receiving sockets' receive buffer, the smallest
	// over the streams (the window axis is what was asked for).
	FigureSndbufGranted = "sndbuf_granted_bytes"
	FigureRcvbufGranted = "rcvbuf_granted_bytes"
	// udpmon's achieved gap between datagrams sent: the mean, and the
	// 99th percentile.
	FigureSpacingAchieved    = "spacing_achieved_us"
	FigureSpacingAchievedP99 = "spacing_achieved_p99_us"
	// Each end's process's peak resident memory when the test ended,
	// from the run's document (wireperf's host_peak_rss_bytes and
	// remote_peak_rss_bytes; a server's covers the tests it ran at once).
	FigureRSSLocalPeak  = "rss_local_peak_bytes"
	FigureRSSRemotePeak = "rss_remote_peak_bytes"
	// Each end's whole host over the run, from its host counters' samples
	// (wireperf's host_counters): CPU busy (user, system and softirq) in
	// percent of all the host's time, its mean over the run weighted by
	// each sample's span and its busiest sample, and the most memory in
	// use (MemTotal − MemAvailable) at any sample.
	FigureHostCPULocalMean  = "host_cpu_local_mean"
	FigureHostCPULocalMax   = "host_cpu_local_max"
	FigureHostCPURemoteMean = "host_cpu_remote_mean"
	FigureHostCPURemoteMax  = "host_cpu_remote_max"
	FigureHostMemLocalPeak  = "host_mem_local_peak_bytes"
	FigureHostMemRemotePeak = "host_mem_remote_peak_bytes"
)

// isFigure reports whether name is one of the figures in Summary.Figures.
func isFigure(name string) bool {
	for _, c := range figureColumns {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Values maps the summary's columns that apply to their values.
func (m Summary) Values() map[string]float64 {
	out := map[string]float64{}
	f := func(name string, v *float64) {
		if v != nil {
			out[name] = *v
		}
	}
	i := func(name string, v *int64) {
		if v != nil {
			out[name] = float64(*v)
		}
	}
	f("received_bits_per_second", m.ReceivedBps)
	f("sent_bits_per_second", m.SentBps)
	i("retransmits", m.Retransmits)
	f("lost_percent", m.LostPercent)
	f("jitter_ms", m.JitterMs)
	f("min_rtt_ms", m.MinRTTms)
	f("mean_rtt_ms", m.MeanRTTms)
	f("rr_p50_us", m.RRp50us)
	f("rr_p99_us", m.RRp99us)
	f("probe_p50_us", m.ProbeP50us)
	f("probe_p99_us", m.ProbeP99us)
	i("out_of_order", m.OutOfOrder)
	f("seconds", m.Seconds)
	i("sent_bytes", m.SentBytes)
	i("received_bytes", m.ReceivedBytes)
	for name, v := range m.Figures {
		out[name] = v
	}
	return out
}

// IsSummaryColumn reports whether name is a summary column.
func IsSummaryColumn(name string) bool {
	for _, c := range SummaryColumns {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Stats over repetitions.
const (
	StatMean   = "mean"
	StatMedian = "median"
	StatMin    = "min"
	StatMax    = "max"
)

// AxisKey is an axis value's identity: the number in base units, or the
// label.
func (a Axis) Key() string {
	if a.Num != nil {
		return strconv.FormatFloat(*a.Num, 'f', -1, 64)
	}
	return a.Label
}

// Cell is one cell: the statistic over the runs at a row and column, with
// their count and spread.
type Cell struct {
	Row, Col int // indexes into Table.Rows and Table.Cols
	Value    float64
	N        int
	Min, Max float64
}

// Table is runs pivoted on two axes.
type Table struct {
	RowAxis, ColAxis string // ColAxis "" is a single column
	Value, Stat      string
	Rows, Cols       []Axis
	Cells            []Cell // only where there are runs
	// Why, in a table without cells, says why no run made one.
	Why string
}

// Cell returns the cell at row i, column j.
func (t *Table) Cell(i, j int) (Cell, bool) {
	for _, c := range t.Cells {
		if c.Row == i && c.Col == j {
			return c, true
		}
	}
	return Cell{}, false
}

// Pivot tabulates the finished runs' value over the row and column axes.
// Runs that lack an axis or the value are left out, and counted in
// skipped.
func Pivot(runs []*Run, rowAxis, colAxis, value, stat string) (t *Table, skipped int, err error) {
	if !IsSummaryColumn(value) {
		var names []string
		for _, c := range SummaryColumns {
			names = append(names, c.Name)
		}
		return nil, 0, fmt.Errorf("--value %q: want one of %s", value, strings.Join(names, ", "))
	}
	switch stat {
	case StatMean, StatMedian, StatMin, StatMax:
	default:
		return nil, 0, fmt.Errorf("--stat %q: want mean, median, min or max", stat)
	}
	t = &Table{RowAxis: rowAxis, ColAxis: colAxis, Value: value, Stat: stat}
	rowIdx, colIdx := map[string]int{}, map[string]int{}
	type key struct{ r, c string }
	samples := map[key][]float64{}
	seenAxes := map[string]bool{}
	for _, r := range runs {
		for a := range r.Axes {
			seenAxes[a] = true
		}
		if r.State != StateFinished {
			continue
		}
		ra, ok := r.Axes[rowAxis]
		ca, cok := r.Axes[colAxis]
		if colAxis == "" {
			ca, cok = Axis{Label: value}, true
		}
		v, vok := r.Summary.Values()[value]
		if !ok || !cok || !vok {
			skipped++
			continue
		}
		// Rows and columns by number, labelled alike whichever run came
		// first: an imported log's "64.0 KByte" and a native "64k" are one
		// row, 64K.
		if _, ok := rowIdx[ra.Key()]; !ok {
			rowIdx[ra.Key()] = len(t.Rows)
			t.Rows = append(t.Rows, CanonicalAxis(rowAxis, ra))
		}
		if _, ok := colIdx[ca.Key()]; !ok {
			colIdx[ca.Key()] = len(t.Cols)
			t.Cols = append(t.Cols, CanonicalAxis(colAxis, ca))
		}
		k := key{ra.Key(), ca.Key()}
		samples[k] = append(samples[k], v)
	}
	for _, a := range []string{rowAxis, colAxis} {
		if a != "" && len(runs) > 0 && !seenAxes[a] {
			var have []string
			for n := range seenAxes {
				have = append(have, n)
			}
			sort.Strings(have)
			return nil, 0, fmt.Errorf("no run has the axis %q (axes: %s)", a, strings.Join(have, ", "))
		}
	}
	sortAxes(t.Rows)
	sortAxes(t.Cols)
	for i, ra := range t.Rows {
		for j, ca := range t.Cols {
			vs := samples[key{ra.Key(), ca.Key()}]
			if len(vs) == 0 {
				continue
			}
			sort.Float64s(vs)
			c := Cell{Row: i, Col: j, N: len(vs), Min: vs[0], Max: vs[len(vs)-1]}
			switch stat {
			case StatMean:
				var sum float64
				for _, v := range vs {
					sum += v
				}
				c.Value = sum / float64(len(vs))
			case StatMedian:
				if n := len(vs); n%2 == 1 {
					c.Value = vs[n/2]
				} else {
					c.Value = (vs[n/2-1] + vs[n/2]) / 2
				}
			case StatMin:
				c.Value = c.Min
			case StatMax:
				c.Value = c.Max
			}
			t.Cells = append(t.Cells, c)
		}
	}
	if len(t.Cells) == 0 {
		t.Why = whyEmpty(runs, rowAxis, colAxis, value)
	}
	return t, skipped, nil
}

// counterparts are the values a run that lacks one may have instead: an
// iperf2 client's log has only the sender's figures.
var counterparts = map[string]struct{ other, has string }{
	"received_bits_per_second": {"sent_bits_per_second", "sender"},
	"received_bytes":           {"sent_bytes", "sender"},
	"sent_bits_per_second":     {"received_bits_per_second", "receiver"},
	"sent_bytes":               {"received_bytes", "receiver"},
}

// whyEmpty says why no run made a cell: no run, none finished, none with
// the axes, or none with the value, and which value they have instead.
func whyEmpty(runs []*Run, rowAxis, colAxis, value string) string {
	if len(runs) == 0 {
		return "no run matches the selection"
	}
	var finished, withAxes, counterpart []*Run
	states := map[string]int{}
	for _, r := range runs {
		if r.State != StateFinished {
			states[r.State]++
			continue
		}
		finished = append(finished, r)
		if _, ok := r.Axes[rowAxis]; !ok {
			continue
		}
		if _, ok := r.Axes[colAxis]; colAxis != "" && !ok {
			continue
		}
		withAxes = append(withAxes, r)
		if c, ok := counterparts[value]; ok {
			if _, has := r.Summary.Values()[c.other]; has {
				counterpart = append(counterpart, r)
			}
		}
	}
	switch {
	case len(finished) == 0:
		var parts []string
		for st, n := range states {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
		sort.Strings(parts)
		return fmt.Sprintf("%s, none finished (%s)", countRuns(len(runs)), strings.Join(parts, ", "))
	case len(withAxes) == 0:
		axes := rowAxis
		if colAxis != "" {
			axes += " and " + colAxis
		}
		return fmt.Sprintf("%s finished, none with both %s", countRuns(len(finished)), axes)
	case len(counterpart) == len(withAxes):
		c := counterparts[value]
		return fmt.Sprintf("%s only %s figures: try --value %s", haveRuns(len(counterpart)), c.has, c.other)
	case isFigure(value):
		return fmt.Sprintf("%s no %s: runs stored before wireperf kept it, and text logs, have none", haveRuns(len(withAxes)), value)
	}
	return fmt.Sprintf("%s no %s", haveRuns(len(withAxes)), value)
}

func countRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// haveRuns is "1 run has" or "3 runs have".
func haveRuns(n int) string {
	if n == 1 {
		return "1 run has"
	}
	return fmt.Sprintf("%d runs have", n)
}

// sortAxes orders numbers by value, then words by name.
func sortAxes(as []Axis) {
	sort.SliceStable(as, func(i, j int) bool {
		a, b := as[i], as[j]
		switch {
		case a.Num != nil && b.Num != nil:
			return *a.Num < *b.Num
		case a.Num != nil:
			return true
		case b.Num != nil:
			return false
		}
		return a.Label < b.Label
	})
}
