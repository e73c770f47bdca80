package grid

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// A host only probed (ping, tcp-connect) runs no daemon: it is a column
// of the matrix with no row of its own, so no cell from it is drawn, let
// alone judged stale; its column's cells are coloured by the probe's
// RTT and loss thresholds.
func TestProbedHostIsAColumnOnly(t *testing.T) {
	echo := Test{Name: "echo", Command: "ping --count 5", Interval: time.Minute, OneWay: true,
		Thresholds: Thresholds{RTTp99Amber: 2 * time.Millisecond, RTTp99Red: 5 * time.Millisecond, LossAmberPercent: 1, LossRedPercent: 10}}
	at := now.Add(-10 * time.Second)
	g := Grid{Title: "probes", Generated: now, Hosts: []string{"a", "b", "router"}, Tests: []Test{echo},
		Scheduled: map[PairKey]bool{{"a", "router", "echo"}: true, {"b", "router", "echo"}: true, {"a", "b", "echo"}: true},
		Cells: []Cell{
			{Figures: Figures{Src: "a", Dst: "router", Test: "echo", At: at, GoodputBps: math.NaN(), LostPercent: 0, RTTp99: 6 * time.Millisecond}, State: "finished"},
			{Figures: Figures{Src: "b", Dst: "router", Test: "echo", At: at, GoodputBps: math.NaN(), LostPercent: 20, RTTp99: time.Millisecond}, State: "finished"},
			{Figures: Figures{Src: "a", Dst: "b", Test: "echo", At: at, GoodputBps: math.NaN(), LostPercent: 0, RTTp99: 3 * time.Millisecond}, State: "finished"},
		}}
	if got := g.Sources(); strings.Join(got, ",") != "a,b" {
		t.Errorf("sources %v, want a and b: router starts no pair", got)
	}
	var buf bytes.Buffer
	if err := Render(&buf, g); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `<th scope="col">router</th>`) {
		t.Error("router has no column")
	}
	if strings.Contains(page, `<th scope="row">router</th>`) {
		t.Error("router, which runs no daemon, has a row")
	}
	if strings.Contains(page, `data-src="router"`) {
		t.Error("a cell from router is drawn")
	}
	for _, want := range []struct{ src, dst, colour string }{{"a", "router", "red"}, {"b", "router", "red"}, {"a", "b", "amber"}} {
		cell := cellHTML(t, page, want.src, want.dst)
		if !strings.Contains(cell, `data-colour="`+want.colour+`"`) {
			t.Errorf("%s → %s: %s, want %s", want.src, want.dst, cell, want.colour)
		}
	}
	if cell := cellHTML(t, page, "b", "router"); !strings.Contains(cell, "loss 20% above 10%") {
		t.Errorf("b → router's reason: %s", cell)
	}
}

// cellHTML is the page's cell from src to dst.
func cellHTML(t *testing.T, page, src, dst string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `<td data-src="`+src+`" data-dst="`+dst+`">`)
	if !ok {
		t.Fatalf("no cell %s → %s", src, dst)
	}
	cell, _, _ := strings.Cut(rest, "</td>")
	return cell
}
