package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Bounds are what each figure may grow per accepted test. A clean
// server's trends sit well inside them (docs/gates.md has the figures):
// its live heap settles by about +6 KB a test over a 5-minute soak's
// first minutes (25 runs; an hour-long run shows no lasting growth), so
// the heap's bound is 8 KB. What a run catches depends on its noise and
// is printed with it.
var bounds = struct{ heap, fds, goroutines, rss Bound }{
	heap:       Bound{Name: "heap live", Unit: "bytes", PerClient: 8e3},
	fds:        Bound{Name: "fds", PerClient: 0.05},
	goroutines: Bound{Name: "goroutines", PerClient: 0.05},
	rss:        Bound{Name: "rss", Unit: "bytes", PerClient: 128e3},
}

// status is the part of the server's status line the judge reads.
type status struct {
	Time       time.Time `json:"time"`
	Msg        string    `json:"msg"`
	Goroutines float64   `json:"goroutines"`
	HeapLive   float64   `json:"heap_live_bytes"`
	Accepted   float64   `json:"accepted"`
	Refused    int64     `json:"refused"`
	Shed       int64     `json:"shed"`
	AuthFailed int64     `json:"auth_failed"`
	GCCycles   int64     `json:"gc_cycles"`
}

// soakRun is a soak's samples, their times in seconds from the first
// /proc sample.
type soakRun struct {
	procT, rss, fds []float64
	statT           []float64
	status          []status
}

func load(procPath, logPath string) (*soakRun, error) {
	pf, err := os.Open(procPath)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	lf, err := os.Open(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	return parse(pf, lf)
}

func parse(proc, log io.Reader) (*soakRun, error) {
	r := &soakRun{}
	var t0 float64
	sc := bufio.NewScanner(proc)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue // a sample cut short as the server stopped
		}
		var v [3]float64
		for i := range f {
			var err error
			if v[i], err = strconv.ParseFloat(f[i], 64); err != nil {
				return nil, fmt.Errorf("/proc samples: %q: %w", sc.Text(), err)
			}
		}
		if len(r.procT) == 0 {
			t0 = v[0]
		}
		r.procT = append(r.procT, v[0]-t0)
		r.rss = append(r.rss, v[1]*1024)
		r.fds = append(r.fds, v[2])
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(r.procT) == 0 {
		return nil, errors.New("no /proc samples")
	}
	sc = bufio.NewScanner(log)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"server status"`) {
			continue
		}
		var s status
		if err := json.Unmarshal(line, &s); err != nil || s.Msg != "server status" {
			continue
		}
		r.status = append(r.status, s)
		r.statT = append(r.statT, float64(s.Time.UnixNano())/1e9-t0)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(r.status) == 0 {
		return nil, errors.New("no status lines in the server's log")
	}
	return r, nil
}

// report is a soak's verdicts and what it ran.
type report struct {
	seconds, warm, window float64
	samples               int
	tests, testsPerHour   float64
	last                  status
	verdicts              []Verdict
}

func (r report) growing() bool {
	for _, v := range r.verdicts {
		if v.Growing {
			return true
		}
	}
	return false
}

func (r report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %.0f s, %.0f s warm-up, %d samples of %.0f s after it, %.0f tests accepted after it (%.0f per hour)\n",
		r.seconds, r.warm, r.samples, r.window, r.tests, r.testsPerHour)
	for _, v := range r.verdicts {
		fmt.Fprintln(&b, v)
	}
	fmt.Fprintf(&b, "server counters: accepted %.0f, refused %d, shed %d, auth failed %d; %d collections\n",
		r.last.Accepted, r.last.Refused, r.last.Shed, r.last.AuthFailed, r.last.GCCycles)
	return b.String()
}

func (r *soakRun) judge(warm, window float64) (report, error) {
	rep := report{seconds: r.procT[len(r.procT)-1], warm: warm, window: window, last: r.status[len(r.status)-1]}
	// Tests per hour after the warm-up, from the accepted counter.
	var first *status
	var firstT float64
	for i := range r.status {
		if r.statT[i] >= warm {
			first, firstT = &r.status[i], r.statT[i]
			break
		}
	}
	lastT := r.statT[len(r.statT)-1]
	if first == nil || lastT <= firstT {
		return rep, errors.New("no status lines after the warm-up; run longer")
	}
	rep.tests = rep.last.Accepted - first.Accepted
	rep.testsPerHour = rep.tests / (lastT - firstT) * 3600
	if rep.tests <= 0 {
		return rep, errors.New("no tests accepted after the warm-up: the soak's clients did not run")
	}
	col := func(f func(s status) float64) []float64 {
		ys := make([]float64, len(r.status))
		for i, s := range r.status {
			ys[i] = f(s)
		}
		return ys
	}
	series := []struct {
		b      Bound
		ts, ys []float64
	}{
		{bounds.heap, r.statT, col(func(s status) float64 { return s.HeapLive })},
		{bounds.fds, r.procT, r.fds},
		{bounds.goroutines, r.statT, col(func(s status) float64 { return s.Goroutines })},
		{bounds.rss, r.procT, r.rss},
	}
	for _, s := range series {
		wt, wy := windowMeans(s.ts, s.ys, warm, window)
		if len(wt) < 3 {
			return rep, fmt.Errorf("%s: %d samples of %.0f s after the warm-up; run longer", s.b.Name, len(wt), window)
		}
		rep.samples = len(wt)
		v, err := judge(s.b, wt, wy, rep.testsPerHour)
		if err != nil {
			return rep, err
		}
		rep.verdicts = append(rep.verdicts, v)
	}
	return rep, nil
}
