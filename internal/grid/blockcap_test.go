package grid

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
