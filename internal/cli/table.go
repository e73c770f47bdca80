package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/units"
)

type tableFlags struct {
	sel    selectFlags
	rows   string
	cols   string
	value  string
	stat   string
	format string
}

func newTableCmd(e env) *cobra.Command {
	f := &tableFlags{value: "received_bits_per_second", stat: archive.StatMean, format: "text"}
	cmd := &cobra.Command{
		Use:   "table --rows AXIS [--cols AXIS]",
		Short: "Pivot stored runs into a table: a summary value over two axes, across repetitions",
		Example: `  wireperf table --campaign grid --rows window --cols parallel
  wireperf table --campaign grid --rows window --cols time --stat median --format markdown
  wireperf table --where source=iperf2-text --rows window --cols parallel --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTable(cmd, e, f)
		},
	}
	f.sel.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.rows, "rows", "", "the axis down the side (required), e.g. window")
	fs.StringVar(&f.cols, "cols", "", "the axis across the top, e.g. parallel")
	fs.StringVar(&f.value, "value", f.value, "the summary value in the cells")
	fs.StringVar(&f.stat, "stat", f.stat, "over repetitions: mean, median, min or max")
	fs.StringVar(&f.format, "format", f.format, "text, csv, json or markdown")
	return cmd
}

func runTable(cmd *cobra.Command, e env, f *tableFlags) error {
	if f.rows == "" {
		return usagef("table needs --rows AXIS (%s)", strings.Join(campaign.AxisNames(), ", "))
	}
	switch f.format {
	case "text", "csv", "json", "markdown":
	default:
		return usagef("--format %q: want text, csv, json or markdown", f.format)
	}
	rows, _ := campaign.CanonicalAxis(f.rows)
	cols := f.cols
	if cols != "" {
		cols, _ = campaign.CanonicalAxis(cols)
	}
	filter, keep, err := f.sel.filter(time.Now())
	if err != nil {
		return err
	}
	store, err := openArchiveToRead(cmd.Context(), f.sel.db)
	if err != nil {
		return err
	}
	defer store.Close()
	if filter.Campaign != "" {
		if _, err := store.GetCampaign(cmd.Context(), filter.Campaign); err != nil {
			names, _ := store.Campaigns(cmd.Context())
			return usagef("no campaign %q in %s (campaigns: %s)", filter.Campaign, store.DSN(), strings.Join(names, ", "))
		}
	}
	all, err := store.List(cmd.Context(), filter)
	if err != nil {
		return err
	}
	var runs []*archive.Run
	for _, r := range all {
		if keep(r) {
			runs = append(runs, r)
		}
	}
	t, _, err := archive.Pivot(runs, rows, cols, f.value, f.stat)
	if err != nil {
		return usageError{err}
	}
	switch f.format {
	case "json":
		return writeTableJSON(e.stdout, t)
	case "csv":
		return writeTableCSV(e.stdout, t)
	}
	writeTableText(e.stdout, t, f.format == "markdown")
	if rows == campaign.AxisWindow || cols == campaign.AxisWindow {
		for _, note := range cappedWindowNotes(cmd, store, runs) {
			fmt.Fprintf(e.stdout, "NOTE: %s\n", note)
		}
	}
	return nil
}

// cappedWindowNotes says which of the runs' windows both hosts' limits
// granted alike (campaign.SameWindows), from the smallest rmem_max and
// wmem_max any of them reported. It reads at most maxLimitRuns runs'
// limits: a campaign's hosts keep theirs.
func cappedWindowNotes(cmd *cobra.Command, store *archive.Store, runs []*archive.Run) []string {
	const maxLimitRuns = 50
	var rmem, wmem int64
	seen := map[float64]bool{}
	var windows []float64
	low := func(cur, v int64) int64 {
		if v > 0 && (cur == 0 || v < cur) {
			return v
		}
		return cur
	}
	for i, r := range runs {
		if a, ok := r.Axes[campaign.AxisWindow]; ok && a.Num != nil && !seen[*a.Num] {
			seen[*a.Num] = true
			windows = append(windows, *a.Num)
		}
		if i >= maxLimitRuns {
			continue
		}
		full, err := store.Get(cmd.Context(), r.ID)
		if err != nil {
			continue
		}
		for _, hl := range full.Limits {
			var l struct {
				RmemMax int64 `json:"rmem_max"`
				WmemMax int64 `json:"wmem_max"`
			}
			if json.Unmarshal([]byte(hl.Limits), &l) == nil {
				rmem, wmem = low(rmem, l.RmemMax), low(wmem, l.WmemMax)
			}
		}
	}
	return campaign.SameWindows(windows, rmem, wmem)
}

// tableJSON is the table's JSON layout: rows and columns as numbers in
// base units (or words), cells in the value's unit (bits per second for
// rates).
type tableJSON struct {
	RowAxis string          `json:"row_axis"`
	ColAxis string          `json:"col_axis,omitempty"`
	Value   string          `json:"value"`
	Stat    string          `json:"stat"`
	Rows    []any           `json:"rows"`
	Cols    []any           `json:"cols"`
	Cells   []tableCellJSON `json:"cells"`
}

type tableCellJSON struct {
	Row   any     `json:"row"`
	Col   any     `json:"col"`
	Value float64 `json:"value"`
	N     int     `json:"n"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

func axisJSON(a archive.Axis) any {
	if a.Num != nil {
		return *a.Num
	}
	return a.Label
}

func writeTableJSON(w io.Writer, t *archive.Table) error {
	out := tableJSON{RowAxis: t.RowAxis, ColAxis: t.ColAxis, Value: t.Value, Stat: t.Stat,
		Rows: []any{}, Cols: []any{}, Cells: []tableCellJSON{}}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, axisJSON(r))
	}
	for _, c := range t.Cols {
		out.Cols = append(out.Cols, axisJSON(c))
	}
	for _, c := range t.Cells {
		out.Cells = append(out.Cells, tableCellJSON{Row: out.Rows[c.Row], Col: out.Cols[c.Col], Value: c.Value, N: c.N, Min: c.Min, Max: c.Max})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeTableCSV(w io.Writer, t *archive.Table) error {
	cw := csv.NewWriter(w)
	colName := t.ColAxis
	if colName == "" {
		colName = "col"
	}
	cw.Write([]string{t.RowAxis, colName, t.Value, "n", "min", "max"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range t.Cells {
		cw.Write([]string{t.Rows[c.Row].Key(), t.Cols[c.Col].Key(), num(c.Value), strconv.Itoa(c.N), num(c.Min), num(c.Max)})
	}
	cw.Flush()
	return cw.Error()
}

// valueText shows a value in iperf's units.
func valueText(name string, v float64) string {
	switch {
	case strings.HasSuffix(name, "_bits_per_second"):
		return strings.TrimSpace(units.FormatRate(v, 'a'))
	case strings.HasSuffix(name, "_bytes"):
		return strings.TrimSpace(units.FormatTransfer(v, 'A'))
	case name == "retransmits":
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// spreadText shows v in the unit that valueText picked for value, without
// the unit: "15.2" beside "15.8 Gbits/sec".
func spreadText(name string, value, v float64) string {
	if strings.HasSuffix(name, "_bits_per_second") {
		shown := strings.TrimSpace(units.FormatRate(value, 'a'))
		if i := strings.IndexByte(shown, ' '); i > 0 {
			unit := shown[i+1:]
			if f, err := units.ParseFormat(strings.ToLower(unit[:1])); err == nil && unit != "bits/sec" {
				return strings.Fields(units.FormatRate(v, f))[0]
			}
		}
	}
	return valueText(name, v)
}

// tableGrid is the table as printed: a header row, then one row per
// value of the row axis, each cell the value with its spread.
func tableGrid(t *archive.Table) [][]string {
	corner := t.RowAxis
	if t.ColAxis != "" {
		corner += " \\ " + t.ColAxis
	}
	header := []string{corner}
	for _, c := range t.Cols {
		label := axisText(t.ColAxis, c)
		if t.ColAxis == "" {
			label = t.Value
		}
		header = append(header, label)
	}
	grid := [][]string{header}
	for i, r := range t.Rows {
		line := []string{axisText(t.RowAxis, r)}
		for j := range t.Cols {
			c, ok := t.Cell(i, j)
			if !ok {
				line = append(line, "-")
				continue
			}
			cell := valueText(t.Value, c.Value)
			if c.N > 1 {
				cell += fmt.Sprintf(" (%s–%s, n=%d)", spreadText(t.Value, c.Value, c.Min), spreadText(t.Value, c.Value, c.Max), c.N)
			} else {
				cell += " (n=1)"
			}
			line = append(line, cell)
		}
		grid = append(grid, line)
	}
	return grid
}

func writeTableText(w io.Writer, t *archive.Table, markdown bool) {
	if len(t.Rows) == 0 {
		fmt.Fprintln(w, "no finished runs with these axes and this value")
		return
	}
	grid := tableGrid(t)
	header := grid[0]
	widths := make([]int, len(header))
	for _, line := range grid {
		for j, s := range line {
			if n := len([]rune(s)); n > widths[j] {
				widths[j] = n
			}
		}
	}
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-len([]rune(s))) }
	if !markdown {
		fmt.Fprintf(w, "%s, %s over repetitions (min–max, n=runs)\n", t.Value, t.Stat)
	}
	for i, line := range grid {
		cells := make([]string, len(line))
		for j, s := range line {
			cells[j] = pad(s, widths[j])
		}
		if markdown {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			if i == 0 {
				seps := make([]string, len(line))
				for j := range seps {
					seps[j] = strings.Repeat("-", widths[j])
				}
				fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
			}
			continue
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(cells, "  "), " "))
	}
}
