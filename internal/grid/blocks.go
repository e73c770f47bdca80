package grid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// SummaryHosts is the most hosts the page draws host by host. A larger
// grid with groups is drawn as a group × group summary per test, and a
// block of it (one group's hosts × another's) is fetched when clicked:
// 1,000 hosts would be a million cells per test.
const SummaryHosts = 50

// Group is a set of the grid's hosts shown together: the mesh file's
// group a host's tasks come from.
type Group struct {
	Name  string
	Hosts []string
}

// Summarised says whether g is drawn as group summaries, whose page
// holds no histories: each block fetched brings its own.
func (g Grid) Summarised() bool { return len(g.Groups) > 0 && len(g.Hosts) > SummaryHosts }

// summaryView is one test's group × group matrix.
type summaryView struct {
	Groups []string
	Rows   []summaryRow
}

type summaryRow struct {
	Group string
	Cells []summaryCell
}

// summaryCell is one block: its worst half-cell and its counts by colour.
type summaryCell struct {
	From, To string
	Colour   Colour
	Worst    string
	Counts   []string
	Title    string
}

// summary judges every half-cell of test t and sums them up by block:
// a row per group with a host that some scheduled pair starts from (a
// group of hosts only measured to, by ping or tcp-connect, is a column
// with no row), a column per group.
func (g Grid) summary(t Test, cells map[cellKey]Cell, counts map[Colour]int) summaryView {
	var sv summaryView
	sources := g.sourceSet()
	for _, gr := range g.Groups {
		sv.Groups = append(sv.Groups, gr.Name)
	}
	for _, from := range g.Groups {
		srcs := onlySources(from.Hosts, sources)
		if len(srcs) == 0 {
			continue
		}
		row := summaryRow{Group: from.Name}
		for _, to := range g.Groups {
			sc := summaryCell{From: from.Name, To: to.Name, Colour: Green}
			byColour := map[Colour]int{}
			worst := -1
			for _, src := range srcs {
				for _, dst := range to.Hosts {
					if src == dst {
						continue
					}
					for _, d := range t.directions() {
						c := g.cellAt(cells, src, dst, t.Name, d)
						v := g.judge(c, t)
						byColour[v.Colour]++
						counts[v.Colour]++
						if r := Severity(v.Colour); r > worst {
							worst = r
							sc.Colour = v.Colour
							sc.Worst = fmt.Sprintf("%s %s %s", src, map[Direction]string{Forward: "→", Reverse: "←"}[d], dst)
							sc.Title = strings.Join(v.Reasons, "; ")
						}
					}
				}
			}
			if worst < 0 {
				sc.Colour, sc.Worst = Unmeasured, "no pairs"
			}
			for _, col := range Colours {
				if n := byColour[col]; n > 0 {
					sc.Counts = append(sc.Counts, fmt.Sprintf("%d %s", n, colourWords(col)))
				}
			}
			sc.Title = fmt.Sprintf("%s → %s: worst %s (%s: %s); %s", from.Name, to.Name, sc.Worst, sc.Colour, sc.Title, strings.Join(sc.Counts, ", "))
			row.Cells = append(row.Cells, sc)
		}
		sv.Rows = append(sv.Rows, row)
	}
	return sv
}

// directions are the halves of a test's cells.
func (t Test) directions() []Direction {
	if t.OneWay {
		return []Direction{Forward}
	}
	return []Direction{Forward, Reverse}
}

type cellKey struct {
	src, dst, test string
	dir            Direction
}

// lastCells indexes the grid's cells, the newest of each half.
func (g Grid) lastCells() map[cellKey]Cell {
	cells := make(map[cellKey]Cell, len(g.Cells))
	for _, c := range g.Cells {
		if c.Direction == "" {
			c.Direction = Forward
		}
		k := cellKey{c.Src, c.Dst, c.Test, c.Direction}
		if old, ok := cells[k]; !ok || c.At.After(old.At) {
			cells[k] = c
		}
	}
	return cells
}

// cellAt is a half's last run, or an empty cell when it has none.
func (g Grid) cellAt(cells map[cellKey]Cell, src, dst, test string, d Direction) Cell {
	if c, ok := cells[cellKey{src, dst, test, d}]; ok {
		return c
	}
	return Cell{Figures: Figures{Src: src, Dst: dst, Test: test, Direction: d, GoodputBps: nanValue, LostPercent: nanValue}}
}

// MaxBlockHosts bounds a block's side: 100 × 100 hosts is 10,000 cells
// and a day's histories of some 115,000 runs at one a minute; a
// 1,000 × 1,000 block was 232 MB rendered in 41 s. A larger group is
// drilled into, MaxBlockHosts hosts at a time (from_at=, to_at=).
const MaxBlockHosts = 100

// BlockSide is a block's rows or columns as asked: a group, and the
// first of its hosts to show ("" for the first).
type BlockSide struct{ Group, At string }

// BlockHosts is the hosts of a block's columns: at most MaxBlockHosts
// of the group's, from the at-th. A group larger than that is refused
// without at, with a message saying how to drill in.
func (g Grid) BlockHosts(side BlockSide, param string) ([]string, error) {
	hosts, err := g.groupHosts(side.Group)
	if err != nil {
		return nil, err
	}
	return pageOfHosts(side, hosts, param)
}

// BlockRows is the hosts of a block's rows: as BlockHosts, over the
// group's hosts that some scheduled pair starts from (Sources). A group
// of hosts only measured to has none, and is refused.
func (g Grid) BlockRows(side BlockSide) ([]string, error) {
	hosts, err := g.groupHosts(side.Group)
	if err != nil {
		return nil, err
	}
	srcs := onlySources(hosts, g.sourceSet())
	if len(srcs) == 0 {
		return nil, fmt.Errorf("group %q: its hosts are only measured to (they run no daemon): a column, with no row", side.Group)
	}
	return pageOfHosts(side, srcs, "from")
}

func (g Grid) groupHosts(group string) ([]string, error) {
	i := slices.IndexFunc(g.Groups, func(gr Group) bool { return gr.Name == group })
	if i < 0 {
		return nil, fmt.Errorf("group %q: not a group of the grid", group)
	}
	return g.Groups[i].Hosts, nil
}

// pageOfHosts is at most MaxBlockHosts of hosts from side's at-th.
func pageOfHosts(side BlockSide, hosts []string, param string) ([]string, error) {
	if side.At == "" {
		if len(hosts) > MaxBlockHosts {
			return nil, fmt.Errorf("group %q: %d hosts, over a block's limit of %d: ask %d of them at a time with %s_at=0, %d, … %d",
				side.Group, len(hosts), MaxBlockHosts, MaxBlockHosts, param, MaxBlockHosts, (len(hosts)-1)/MaxBlockHosts*MaxBlockHosts)
		}
		return hosts, nil
	}
	at, err := strconv.Atoi(side.At)
	if err != nil || at < 0 || at >= len(hosts) {
		return nil, fmt.Errorf("%s_at: %q: want the index of one of group %q's %d hosts", param, side.At, side.Group, len(hosts))
	}
	return hosts[at:min(len(hosts), at+MaxBlockHosts)], nil
}

// BlockHandler serves one block of a summarised grid, GET
// ?test=INDEX&from=GROUP&to=GROUP[&from_at=N&to_at=N]: the from group's
// hosts as rows, the to group's as columns (at most MaxBlockHosts each,
// from the N-th), as an HTML fragment the page inserts, with the
// block's histories. load is the page's.
func BlockHandler(load func(r *http.Request) (Grid, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		g, err := load(r)
		if err != nil {
			slog.ErrorContext(r.Context(), "grid block", "err", err)
			http.Error(w, "grid: "+err.Error(), http.StatusInternalServerError)
			return
		}
		var b bytes.Buffer
		if err := RenderBlock(&b, g, q.Get("test"), BlockSide{q.Get("from"), q.Get("from_at")}, BlockSide{q.Get("to"), q.Get("to_at")}); err != nil {
			http.Error(w, "grid: "+err.Error(), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		w.Write(b.Bytes())
	})
}

// RenderBlock writes the block of test (its index) from group from to
// group to: a host × host matrix as the small grid draws it, and its
// pairs' histories as JSON in a script element the page reads.
func RenderBlock(w *bytes.Buffer, g Grid, test string, from, to BlockSide) error {
	ti, err := strconv.Atoi(test)
	if err != nil || ti < 0 || ti >= len(g.Tests) {
		return fmt.Errorf("test %q: want the index of one of the grid's %d tests", test, len(g.Tests))
	}
	rows, err := g.BlockRows(from)
	if err != nil {
		return err
	}
	cols, err := g.BlockHosts(to, "to")
	if err != nil {
		return err
	}
	t := g.Tests[ti]
	hists, histIDs := g.histories(func(h History) bool {
		return h.Test == t.Name && (slices.Contains(rows, h.Src) && slices.Contains(cols, h.Dst) ||
			slices.Contains(rows, h.Dst) && slices.Contains(cols, h.Src))
	})
	tv := testView{Test: t, Anchor: fmt.Sprintf("block-%d", ti), Counts: map[Colour]int{}, Columns: cols}
	tv.Rows = g.rows(t, rows, cols, g.lastCells(), histIDs, tv.Counts)
	data, err := json.Marshal(hists)
	if err != nil {
		return err
	}
	return blockPage.Execute(w, struct {
		testView
		From, To  string
		Histories template.JS
	}{tv, from.Group, to.Group, template.JS(data)})
}
