package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// truthResult is a one-stream client→server test: the client's rows of
// sent bytes and the server's of received bytes, each over its own span,
// the server's last a tail.
func truthResult(recv []int64, spans [][2]float64) *result.Result {
	r := &result.Result{}
	r.Local = result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true}}}
	r.Remote = result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1}}}
	var total int64
	for i, b := range recv {
		sp := spans[i]
		r.Local.Intervals = append(r.Local.Intervals, result.Interval{Index: i, Start: sp[0], End: sp[1],
			Streams: []result.StreamInterval{{ID: 1, Sender: true, Bytes: b}}})
		r.Remote.Intervals = append(r.Remote.Intervals, result.Interval{Index: i, Start: sp[0], End: sp[1], Tail: i == len(recv)-1,
			Streams: []result.StreamInterval{{ID: 1, Bytes: b}}})
		total += b
	}
	r.Local.Streams[0].Bytes, r.Remote.Streams[0].Bytes = total, total
	r.Remote.Streams[0].Start, r.Remote.Streams[0].End = spans[0][0], spans[len(spans)-1][1]
	return r
}

func TestTruthChecks(t *testing.T) {
	capacity := map[string]float64{result.RoleClient: 100e6}
	ok := truthResult([]int64{12_400_000, 12_400_000, 1_000_000}, [][2]float64{{0, 1}, {1, 2}, {2, 2.1}})
	if f := append(append(CheckRows(ok, capacity), CheckAddsUp(ok)...), CheckTotal(ok, nil)...); len(f) > 0 {
		t.Fatalf("a possible test failed: %v", f)
	}
	// 13 MB in a second is 104 Mbit/s on a 100 Mbit/s path.
	over := truthResult([]int64{13_000_000, 12_000_000, 1_000_000}, [][2]float64{{0, 1}, {1, 2}, {2, 2.1}})
	if f := CheckRows(over, capacity); len(f) != 1 || !strings.Contains(f[0], "104.0 Mbit/s, above the path's 100.0") {
		t.Errorf("row above capacity: %v", f)
	}
	// A 0.11 s tail 2.05% above the path (as a group's read in CI) is
	// within the cut's milliseconds; one 20% above is not.
	tailOK := truthResult([]int64{12_400_000, 12_400_000, 1_408_000}, [][2]float64{{0, 1}, {1, 2}, {2, 2.11}})
	if f := CheckRows(tailOK, capacity); len(f) != 0 {
		t.Errorf("a tail 2.4%% above the path, within 20 ms of its bytes: %v", f)
	}
	tailOver := truthResult([]int64{12_400_000, 12_400_000, 1_650_000}, [][2]float64{{0, 1}, {1, 2}, {2, 2.11}})
	if f := CheckRows(tailOver, capacity); len(f) != 1 || !strings.Contains(f[0], "120.0 Mbit/s") {
		t.Errorf("a tail 20%% above the path: %v", f)
	}
	if got, want := RowLimit(100e6, 2), 102e6; got != want {
		t.Errorf("a 2 s row's limit: %v, want %v", got, want)
	}
	// A total whose bytes the rows do not hold.
	lost := truthResult([]int64{12_000_000, 12_000_000, 1_000_000}, [][2]float64{{0, 1}, {1, 2}, {2, 2.1}})
	lost.Remote.Streams[0].Bytes += 500
	if f := CheckAddsUp(lost); len(f) != 1 || !strings.Contains(f[0], "server stream 1") {
		t.Errorf("rows that do not add up: %v", f)
	}
	// A total over a longer span than its rows (divided by the wrong time).
	long := truthResult([]int64{12_000_000, 12_000_000, 1_000_000}, [][2]float64{{0, 1}, {1, 2}, {2, 2.1}})
	long.Remote.Streams[0].End = 2.5
	if f := CheckTotal(long, nil); len(f) != 1 || !strings.Contains(f[0], "its rows") {
		t.Errorf("a total over the wrong span: %v", f)
	}
	if f := CheckTotal(ok, map[string]Arithmetic{result.RoleClient: {Rate: 100e6}}); len(f) != 1 || !strings.Contains(f[0], "the arithmetic 100.0") {
		t.Errorf("a total 5%% under the arithmetic: %v", f)
	}
}

// TestCheckArithmeticRouterIdle: the router's idle time lowers the floor
// by its share of the span, and never raises the ceiling.
func TestCheckArithmeticRouterIdle(t *testing.T) {
	const rate, secs = 585.6e6, 4.22
	cases := []struct {
		name  string
		total float64
		idle  time.Duration
		want  string // "" for no failure
	}{
		{"at the rate", rate, 0, ""},
		{"0.9% under", 0.991 * rate, 0, ""},
		{"1.2% under, the router never idle", 0.988 * rate, 0, "the arithmetic 585.6"},
		// 25 ms of 4.22 s is 0.59%: the floor is 582.1, and 1% under it 576.3.
		{"1.2% under, the router idle 25 ms", 0.988 * rate, 25 * time.Millisecond, ""},
		{"2% under, the router idle 25 ms", 0.98 * rate, 25 * time.Millisecond, "less the router's 25.0 ms idle (0.6%): 582.1"},
		{"1.5% above, the router idle", 1.015 * rate, 25 * time.Millisecond, "above the arithmetic 585.6"},
		{"idle longer than the span", 0, 5 * time.Second, ""},
	}
	for _, c := range cases {
		f := checkArithmetic("client→server", c.total, secs, Arithmetic{Rate: rate, RouterIdle: c.idle})
		switch {
		case c.want == "" && len(f) > 0:
			t.Errorf("%s: failed: %v", c.name, f)
		case c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)):
			t.Errorf("%s: got %v, want one failure saying %q", c.name, f, c.want)
		}
	}
}

// checkRate names the rate it compares with.
func TestCheckRateNamesItsReference(t *testing.T) {
	f := checkRate("client→server", "its full intervals' mean", 560e6, 5, 580e6, 10*time.Millisecond)
	if len(f) != 1 || !strings.Contains(f[0], "its full intervals' mean 580.0 less the router's 10.0 ms idle (0.2%): 578.8") {
		t.Errorf("checkRate: %v", f)
	}
}

func TestRouterIdle(t *testing.T) {
	var before, after RouterStats
	before.AtoB.OutputLostUs, before.BtoA.OutputLostUs = 1000, 2000
	after.AtoB.OutputLostUs, after.BtoA.OutputLostUs = 13_958, 57_185
	if got, want := RouterIdle(before, after), 68143*time.Microsecond; got != want {
		t.Errorf("RouterIdle = %v, want %v", got, want)
	}
}

// UDP loss is the router's plus the receiving socket's own count: exact
// where the socket counts datagrams, a lower bound where it counted GRO
// batches; a loss neither place saw fails, as does a count above it.
func TestCheckUDPLoss(t *testing.T) {
	udp := func(lost int64, socket *uint64, gro bool) *result.Result {
		r := &result.Result{}
		r.Local = result.End{Role: result.RoleClient, Streams: []result.Stream{{ID: 1, Sender: true, UDP: &result.UDP{Sent: 100000}}}}
		r.Remote = result.End{Role: result.RoleServer, Streams: []result.Stream{{ID: 1,
			UDP: &result.UDP{Lost: lost, SocketDrops: socket, SocketDropsGRO: gro}}}}
		return r
	}
	n := func(v uint64) *uint64 { return &v }
	for _, c := range []struct {
		name   string
		res    *result.Result
		router int64
		fail   string
	}{
		{"the router's alone", udp(3854, n(0), false), 3854, ""},
		{"router and a busy receiver", udp(9922, n(6068), false), 3854, ""},
		{"more lost than both counted", udp(9922, n(0), false), 3854, "the router dropped 3854 and the receiving socket 0"},
		{"socket not counted", udp(9922, nil, false), 3854, "9922 datagrams counted lost"},
		{"GRO batches, a lower bound", udp(9922, n(1500), true), 3854, ""},
		{"GRO batches above the loss", udp(4000, n(1500), true), 3854, "GRO batches"},
		{"fewer lost than the router dropped", udp(3000, n(0), false), 3854, "3000 datagrams counted lost"},
	} {
		got := strings.Join(CheckUDPLoss(c.res, map[string]int64{result.RoleClient: c.router}), "; ")
		if c.fail == "" && got != "" || c.fail != "" && !strings.Contains(got, c.fail) {
			t.Errorf("%s: %q, want %q", c.name, got, c.fail)
		}
	}
}
