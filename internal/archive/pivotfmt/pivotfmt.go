// Package pivotfmt prints an archive pivot (archive.Pivot) as `wireperf
// table` does: text, Markdown, CSV or JSON, axis values and summary values
// in iperf's units. The HTML report shows the same grid.
package pivotfmt

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
	"github.com/wireperf/wireperf/internal/units"
)

// AxisText shows an axis value in the one form every source's runs share
// (archive.CanonicalAxis): 64K, 4M, 10s; a word as it was written.
func AxisText(axis string, a archive.Axis) string {
	return archive.CanonicalAxis(axis, a).Label
}

// ValueText shows a summary value in iperf's units.
func ValueText(name string, v float64) string {
	switch {
	case strings.HasSuffix(name, "_bits_per_second"):
		return strings.TrimSpace(units.FormatRate(v, 'a'))
	case strings.HasSuffix(name, "_bytes"):
		return strings.TrimSpace(units.FormatTransfer(v, 'A'))
	case name == "retransmits":
		return strconv.FormatFloat(v, 'f', -1, 64)
	case strings.HasPrefix(name, "cpu_"):
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// spreadText shows a cell's range. Rates whose ends read best in the
// unit of the value show the numbers alone ("15.2–15.8" beside "15.8
// Gbits/sec"); otherwise each end has its own unit ("2.60 Mbits/sec–8.62
// Gbits/sec"), so that a slow run does not read as 0.00.
func spreadText(name string, value, lo, hi float64) string {
	if strings.HasSuffix(name, "_bits_per_second") {
		unit := rateUnit(value)
		if unit != "bits/sec" && rateUnit(lo) == unit && rateUnit(hi) == unit {
			if f, err := units.ParseFormat(strings.ToLower(unit[:1])); err == nil {
				return strings.Fields(units.FormatRate(lo, f))[0] + "–" + strings.Fields(units.FormatRate(hi, f))[0]
			}
		}
	}
	return ValueText(name, lo) + "–" + ValueText(name, hi)
}

// rateUnit is the unit ValueText shows a rate in: "Gbits/sec".
func rateUnit(v float64) string {
	shown := strings.Fields(units.FormatRate(v, 'a'))
	return shown[len(shown)-1]
}

// Grid is the table as printed: a header row, then one row per value of
// the row axis, each cell the value with its spread.
func Grid(t *archive.Table) [][]string {
	corner := t.RowAxis
	if t.ColAxis != "" {
		corner += " \\ " + t.ColAxis
	}
	header := []string{corner}
	for _, c := range t.Cols {
		label := AxisText(t.ColAxis, c)
		if t.ColAxis == "" {
			label = t.Value
		}
		header = append(header, label)
	}
	grid := [][]string{header}
	for i, r := range t.Rows {
		line := []string{AxisText(t.RowAxis, r)}
		for j := range t.Cols {
			c, ok := t.Cell(i, j)
			if !ok {
				line = append(line, "-")
				continue
			}
			cell := ValueText(t.Value, c.Value)
			if c.N > 1 {
				cell += fmt.Sprintf(" (%s, n=%d)", spreadText(t.Value, c.Value, c.Min, c.Max), c.N)
			} else {
				cell += " (n=1)"
			}
			line = append(line, cell)
		}
		grid = append(grid, line)
	}
	return grid
}

// Formats are the forms Write prints a table in.
var Formats = []string{"text", "csv", "json", "markdown"}

// Write prints the table in format, one of Formats.
func Write(w io.Writer, t *archive.Table, format string) error {
	switch format {
	case "json":
		return WriteJSON(w, t)
	case "csv":
		return WriteCSV(w, t)
	case "markdown":
		WriteMarkdown(w, t)
	case "text":
		WriteText(w, t)
	default:
		return fmt.Errorf("no table format %q: want %s", format, strings.Join(Formats, ", "))
	}
	return nil
}

// WriteText prints the grid in aligned columns under a line that says
// what the cells are.
func WriteText(w io.Writer, t *archive.Table) { writeGrid(w, t, false) }

// WriteMarkdown prints the grid as a Markdown table.
func WriteMarkdown(w io.Writer, t *archive.Table) { writeGrid(w, t, true) }

func writeGrid(w io.Writer, t *archive.Table, markdown bool) {
	if len(t.Rows) == 0 {
		fmt.Fprintln(w, "no finished runs with these axes and this value")
		if t.Why != "" {
			fmt.Fprintln(w, t.Why)
		}
		return
	}
	grid := Grid(t)
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

// WriteJSON prints the table as one indented JSON object.
func WriteJSON(w io.Writer, t *archive.Table) error {
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

// WriteCSV prints one line per cell, axis values by their keys (numbers
// in base units, or words).
func WriteCSV(w io.Writer, t *archive.Table) error {
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

// CappedWindowNotes says which of the runs' windows both hosts' limits
// granted alike (campaign.SameWindows), from the smallest rmem_max and
// wmem_max any of them reported. It reads at most maxLimitRuns runs'
// limits: a campaign's hosts keep theirs.
func CappedWindowNotes(ctx context.Context, store *archive.Store, runs []*archive.Run) []string {
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
		full, err := store.Get(ctx, r.ID)
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
