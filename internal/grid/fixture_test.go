package grid

import (
	"math"
	"time"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// The two tests of the fixture mesh, with their thresholds.
var (
	tcpTest = Test{Name: "tcp", Command: "client -t 5", Interval: 30 * time.Minute,
		Thresholds: Thresholds{GoodputAmberBps: 500e6, GoodputRedBps: 100e6}}
	udpTest = Test{Name: "latency", Command: "udpmon -n 1000", Interval: 10 * time.Minute, OneWay: true,
		Thresholds: Thresholds{LossAmberPercent: 0.1, LossRedPercent: 1, RTTp99Amber: 20 * time.Millisecond, RTTp99Red: 50 * time.Millisecond, StaleIntervals: 3}}
)

// halfKey names one half-cell.
type halfKey struct {
	src, dst, test string
	dir            Direction
}

// meshGrid is four hosts, every ordered pair measured by a TCP test both
// ways and a one-way latency test but for one pair's latency test, which
// nothing schedules (its old result stays in the archive). Each half-cell
// is built to land on a colour its test's thresholds give, returned
// beside the grid: most are green, and every other colour comes from each
// of its causes.
func meshGrid() (Grid, map[halfKey]Colour) {
	g := Grid{Title: "Mesh of four hosts", Generated: now, Hosts: []string{"ams-1", "fra-1", "lon-1", "par-1"},
		Tests: []Test{tcpTest, udpTest}, Scheduled: map[PairKey]bool{}}
	want := map[halfKey]Colour{}
	tcpCases := []struct {
		colour Colour
		cell   func(c Cell) (Cell, bool)
	}{
		{Green, func(c Cell) (Cell, bool) { c.GoodputBps = 941e6; return c, true }},
		{Amber, func(c Cell) (Cell, bool) { c.GoodputBps = 420e6; return c, true }},
		{Green, func(c Cell) (Cell, bool) { c.GoodputBps = 500e6; return c, true }}, // at the threshold: not below it
		{Red, func(c Cell) (Cell, bool) { c.GoodputBps = 80e6; return c, true }},
		{Green, func(c Cell) (Cell, bool) { c.GoodputBps = 9.4e9; return c, true }},
		{Grey, func(c Cell) (Cell, bool) { c.GoodputBps = 941e6; c.At = now.Add(-61 * time.Minute); return c, true }},
		{Green, func(c Cell) (Cell, bool) { c.GoodputBps = 930e6; c.At = now.Add(-59 * time.Minute); return c, true }},
		{Red, func(c Cell) (Cell, bool) {
			c.State, c.Reason, c.GoodputBps = "failed", "connection refused", math.NaN()
			return c, true
		}},
		{Green, func(c Cell) (Cell, bool) { c.GoodputBps = 700e6; return c, true }},
		{Amber, func(c Cell) (Cell, bool) {
			c.State, c.Reason, c.GoodputBps = "missed", "no slot within the slip of 5m", math.NaN()
			return c, true
		}},
		{Green, func(c Cell) (Cell, bool) { c.GoodputBps = 880e6; return c, true }},
		{Unmeasured, func(c Cell) (Cell, bool) { return c, false }}, // never ran
	}
	udpCases := []struct {
		colour Colour
		cell   func(c Cell) (Cell, bool)
	}{
		{Green, func(c Cell) (Cell, bool) { return c, true }},
		{Amber, func(c Cell) (Cell, bool) { c.RTTp99 = 30 * time.Millisecond; return c, true }},
		{Green, func(c Cell) (Cell, bool) { c.LostPercent = 0.1; return c, true }}, // at the threshold: not above it
		{Red, func(c Cell) (Cell, bool) { c.LostPercent = 2.5; return c, true }},
		{Green, func(c Cell) (Cell, bool) { c.At = now.Add(-29 * time.Minute); return c, true }},
		{Grey, func(c Cell) (Cell, bool) { c.At = now.Add(-31 * time.Minute); return c, true }},
	}
	i, j := 0, 0
	for _, src := range g.Hosts {
		for _, dst := range g.Hosts {
			if src == dst {
				continue
			}
			for _, dir := range []Direction{Forward, Reverse} {
				tc := tcpCases[i%len(tcpCases)]
				i++
				c := Cell{State: "finished", Figures: Figures{Src: src, Dst: dst, Test: "tcp", Direction: dir, At: now.Add(-10 * time.Minute),
					LostPercent: math.NaN(), RTTp50: 11 * time.Millisecond, RTTp99: 14 * time.Millisecond, LastSuccess: now.Add(-10 * time.Minute)}}
				c, ok := tc.cell(c)
				if ok {
					if c.State != "finished" {
						c.LastSuccess = now.Add(-40 * time.Minute)
					}
					g.Cells = append(g.Cells, c)
				}
				want[halfKey{src, dst, "tcp", dir}] = tc.colour
			}
			uc := udpCases[j%len(udpCases)]
			j++
			c := Cell{State: "finished", Figures: Figures{Src: src, Dst: dst, Test: "latency", At: now.Add(-3 * time.Minute), GoodputBps: math.NaN(),
				RTTp50: 4 * time.Millisecond, RTTp99: 6 * time.Millisecond, LastSuccess: now.Add(-3 * time.Minute)}}
			c, _ = uc.cell(c)
			c.LastSuccess = c.At
			g.Cells = append(g.Cells, c)
			want[halfKey{src, dst, "latency", Forward}] = uc.colour
			g.Scheduled[PairKey{src, dst, "tcp"}] = true
			if src == unscheduled.Src && dst == unscheduled.Dst {
				want[halfKey{src, dst, "latency", Forward}] = Unmeasured
			} else {
				g.Scheduled[PairKey{src, dst, "latency"}] = true
			}

			g.Histories = append(g.Histories, history(src, dst, "tcp", i), history(src, dst, "latency", i))
		}
	}
	// Outside the mesh: not shown.
	g.Cells = append(g.Cells, Cell{Figures: Figures{Src: "gone-1", Dst: "ams-1", Test: "tcp", At: now}, State: "failed"})
	return g, want
}

// unscheduled is the fixture's pair that no task measures.
var unscheduled = PairKey{"par-1", "lon-1", "latency"}

// routeChangeAt is when the fixture's TCP histories' path changed: 10
// minutes after their 13th run.
var routeChangeAt = now.Add(-12*30*time.Minute + 10*time.Minute)

// history is 24 runs, every half hour, both ways for TCP, with one
// failure and, for TCP, one route change.
func history(src, dst, test string, phase int) History {
	h := History{Src: src, Dst: dst, Test: test}
	if test == "tcp" {
		h.RouteChanges = []RouteChange{{At: routeChangeAt, Direction: Forward,
			From: []string{"10.0.0.1", "10.0.1.2"}, To: []string{"10.0.0.1", "10.0.9.1", "10.0.1.2"}}}
	}
	for k := 0; k < 24; k++ {
		at := now.Add(-time.Duration(24-k) * 30 * time.Minute)
		wave := math.Sin(float64(k+phase) / 3)
		if test == "latency" {
			h.Points = append(h.Points, Point{At: at, State: "finished", GoodputBps: math.NaN(), LostPercent: 0.05 + 0.05*wave,
				RTTp50: time.Duration(4e6 + 1e6*wave), RTTp99: time.Duration(7e6 + 2e6*wave)})
			continue
		}
		for _, dir := range []Direction{Forward, Reverse} {
			p := Point{At: at, Direction: dir, State: "finished", GoodputBps: 900e6 + 60e6*wave, LostPercent: math.NaN(),
				RTTp50: 11 * time.Millisecond, RTTp99: time.Duration(14e6 + 1e6*wave)}
			if dir == Reverse {
				p.GoodputBps = 850e6 - 40e6*wave
				p.RTTp50, p.RTTp99 = 12*time.Millisecond, time.Duration(16e6+2e6*wave)
			}
			if k == 17 && dir == Forward {
				p = Point{At: at, Direction: dir, State: "failed", Reason: "connection refused", GoodputBps: math.NaN(), LostPercent: math.NaN()}
			}
			h.Points = append(h.Points, p)
		}
	}
	return h
}
