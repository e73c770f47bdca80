package grid

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// A block's side is at most MaxBlockHosts hosts: a larger group is
// refused with a 400 that says how to drill in, and each part asked is
// drawn with its own hosts alone (a 1,000 × 1,000 block was 232 MB).
func TestBlockIsCappedInHosts(t *testing.T) {
	g := Grid{Title: "big", Generated: now, Tests: []Test{tcpTest}, Scheduled: map[PairKey]bool{}}
	var hosts []string
	for i := range 250 {
		hosts = append(hosts, fmt.Sprintf("h%03d", i))
	}
	// Every host starts a pair (to its neighbour): every one is a row.
	for i, h := range hosts {
		g.Scheduled[PairKey{h, hosts[(i+1)%len(hosts)], tcpTest.Name}] = true
	}
	g.Hosts, g.Groups = hosts, []Group{{Name: "all", Hosts: hosts}}
	srv := httptest.NewServer(BlockHandler(func(*http.Request) (Grid, error) { return g, nil }))
	defer srv.Close()
	get := func(q string) (int, string) {
		resp, err := http.Get(srv.URL + "/grid/block?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		return resp.StatusCode, string(b)
	}
	code, out := get("test=0&from=all&to=all")
	if code != http.StatusBadRequest || !strings.Contains(out, "250 hosts, over a block's limit of 100") || !strings.Contains(out, "from_at=0, 100, … 200") {
		t.Fatalf("the whole group: %d %q", code, out)
	}
	if code, out := get("test=0&from=all&from_at=0&to=all&to_at=900"); code != http.StatusBadRequest || !strings.Contains(out, "to_at") {
		t.Fatalf("to_at past the group: %d %q", code, out)
	}
	code, out = get("test=0&from=all&from_at=200&to=all&to_at=100")
	if code != http.StatusOK {
		t.Fatalf("a part: %d %q", code, out)
	}
	rows, cols := strings.Count(out, `<th scope="row"`), 0
	for _, h := range hosts[100:200] {
		if strings.Contains(out, ">"+h+"<") {
			cols++
		}
	}
	if rows != 50 || cols != 100 || strings.Contains(out, ">h050<") {
		t.Fatalf("rows from 200: %d (want 50), columns from 100: %d (want 100)", rows, cols)
	}
}

// A summarised grid drawn from a mesh's groups has a column and no row
// for a group of hosts only measured to (ping, tcp-connect targets that
// run no daemon), on the page and in every block: a block from such a
// group is refused, one to it has the sources as rows and the targets
// as columns, and a mixed group's targets are columns only; its rows
// are paged over its sources.
func TestDestinationOnlyHostsInGroupedGrid(t *testing.T) {
	echo := Test{Name: "echo", Command: "ping --count 5", Interval: time.Minute, OneWay: true,
		Thresholds: Thresholds{RTTp99Amber: 2 * time.Millisecond, RTTp99Red: 5 * time.Millisecond}}
	var meshHosts, routers []string
	for i := range 60 {
		meshHosts = append(meshHosts, fmt.Sprintf("m%02d", i))
	}
	for i := range 3 {
		routers = append(routers, fmt.Sprintf("r%d", i))
	}
	// The "mesh" group holds its daemons and one target of its own, dns.
	mesh := append(slices.Clone(meshHosts), "dns")
	g := Grid{Title: "grouped", Generated: now, Tests: []Test{echo}, Scheduled: map[PairKey]bool{},
		Hosts:  append(slices.Clone(mesh), routers...),
		Groups: []Group{{Name: "mesh", Hosts: mesh}, {Name: "routers", Hosts: routers}}}
	at := now.Add(-10 * time.Second)
	for _, src := range meshHosts {
		for _, dst := range append([]string{"dns"}, routers...) {
			g.Scheduled[PairKey{src, dst, echo.Name}] = true
			g.Cells = append(g.Cells, Cell{Figures: Figures{Src: src, Dst: dst, Test: echo.Name, At: at, GoodputBps: math.NaN(), RTTp99: time.Millisecond}, State: "finished"})
		}
	}
	if !g.Summarised() {
		t.Fatal("the grid is not summarised")
	}
	page := render(t, g)
	if !strings.Contains(page, `<th scope="col">routers</th>`) || strings.Contains(page, `<th scope="row">routers</th>`) ||
		!strings.Contains(page, `<th scope="row">mesh</th>`) {
		t.Error("the summary: want routers a column with no row, mesh a row")
	}
	// Every half-cell judged starts at a daemon's host: 60 sources to 4
	// targets, green, and the 60 × 59 pairs between the daemons, which
	// no task measures; none from dns or a router (252 more).
	if !strings.Contains(page, "240 "+colourWords(Green)+", 3540 "+colourWords(Unmeasured)) {
		t.Errorf("the summary's counts: want 240 %s and 3540 %s", colourWords(Green), colourWords(Unmeasured))
	}

	var b bytes.Buffer
	if err := RenderBlock(&b, g, "0", BlockSide{Group: "routers"}, BlockSide{Group: "mesh"}); err == nil || !strings.Contains(err.Error(), "only measured to") {
		t.Errorf("a block from the routers: %v", err)
	}
	b.Reset()
	if err := RenderBlock(&b, g, "0", BlockSide{Group: "mesh"}, BlockSide{Group: "routers"}); err != nil {
		t.Fatal(err)
	}
	block := b.String()
	if rows := strings.Count(block, `<th scope="row"`); rows != 60 || strings.Contains(block, `<th scope="row">dns</th>`) {
		t.Errorf("mesh → routers: %d rows, want mesh's 60 daemons and not dns", rows)
	}
	for _, r := range routers {
		if !strings.Contains(block, `<th scope="col">`+r+`</th>`) || !strings.Contains(block, `data-dst="`+r+`"`) {
			t.Errorf("mesh → routers: no column or cells for %s", r)
		}
	}
	b.Reset()
	if err := RenderBlock(&b, g, "0", BlockSide{Group: "mesh"}, BlockSide{Group: "mesh"}); err != nil {
		t.Fatal(err)
	}
	if block := b.String(); !strings.Contains(block, `<th scope="col">dns</th>`) || strings.Contains(block, `<th scope="row">dns</th>`) ||
		strings.Contains(block, `data-src="dns"`) {
		t.Error("mesh → mesh: want dns a column with no row")
	}
	// The rows of a block are paged over its sources: the 60 daemons,
	// not the group's 61 hosts.
	if _, err := g.BlockRows(BlockSide{Group: "mesh", At: "60"}); err == nil {
		t.Error("from_at=60 is past mesh's 60 sources, and was taken")
	}
}
