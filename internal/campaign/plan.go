package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// Orders of a campaign's runs.
const (
	OrderShuffle    = "shuffle"
	OrderSequential = "sequential"
)

// MaxRuns bounds a campaign: a typo in a repeat count must not plan a
// year of tests.
const MaxRuns = 100000

// AxisValues is one axis and its values, in the order given.
type AxisValues struct {
	Name   string
	Values []Value
}

// Spec is a campaign as planned: what the flags or the file said.
type Spec struct {
	Name       string
	Targets    []string // hosts; with more than one, the host is an axis
	Port       int
	Axes       []AxisValues
	Fixed      []string // client flags every run gets
	Repeat     int
	Order      string
	ShuffleKey int64 // fixes the shuffle's order; chosen and recorded when 0 is given
	Pause      time.Duration
	// Count, when set, makes each run a UDPmon point: Count datagrams of
	// the run's length (-n = Count × length), however long they take.
	Count int64
	// Test is what each run is: TestClient (wireperf client, the default)
	// or TestRR (wireperf rr, the length axis as the request size).
	Test string
}

// Kinds of test a campaign runs.
const (
	TestClient = "client"
	TestRR     = "rr"
)

// Validate checks what a plan needs.
func (s *Spec) Validate() error {
	if s.Name == "" {
		return fmt.Errorf("a campaign needs a name")
	}
	if len(s.Targets) == 0 {
		return fmt.Errorf("a campaign needs a target host")
	}
	if s.Repeat < 1 || s.Repeat > MaxRuns {
		return fmt.Errorf("repeat %d: want 1 to %d", s.Repeat, MaxRuns)
	}
	if s.Order != OrderShuffle && s.Order != OrderSequential {
		return fmt.Errorf("order %q: want shuffle or sequential", s.Order)
	}
	if s.Test != "" && s.Test != TestClient && s.Test != TestRR {
		return fmt.Errorf("test %q: want client or rr", s.Test)
	}
	if s.Count < 0 || s.Count > 1e12 {
		return fmt.Errorf("count %d: want 1 to 10^12 datagrams", s.Count)
	}
	if s.Pause < 0 {
		return fmt.Errorf("pause %v: must not be negative", s.Pause)
	}
	seen := map[string]bool{}
	n := s.Repeat * len(s.Targets)
	for _, a := range s.Axes {
		if seen[a.Name] {
			return fmt.Errorf("axis %s is given twice", a.Name)
		}
		seen[a.Name] = true
		if len(a.Values) == 0 {
			return fmt.Errorf("axis %s has no values", a.Name)
		}
		n *= len(a.Values)
		if n > MaxRuns {
			return fmt.Errorf("the campaign would have more than %d runs", MaxRuns)
		}
	}
	return nil
}

// Setting is one axis's value in a point.
type Setting struct {
	Axis  string
	Value Value
}

// Point is one combination of axis values, and the target.
type Point struct {
	Target   string
	Settings []Setting // in the spec's axis order
}

// Key names the point canonically: axes sorted by name, values in base
// units, so that the same point has the same key however it was written.
func (p Point) Key() string {
	parts := make([]string, 0, len(p.Settings)+1)
	for _, s := range p.Settings {
		parts = append(parts, s.Axis+"="+s.Value.Key())
	}
	sort.Strings(parts)
	return "host=" + p.Target + "," + strings.Join(parts, ",")
}

// Label is the point as the user wrote it, axes in the spec's order.
func (p Point) Label() string {
	parts := make([]string, 0, len(p.Settings))
	for _, s := range p.Settings {
		parts = append(parts, s.Axis+"="+s.Value.Label)
	}
	return strings.Join(parts, " ")
}

// Value returns the point's value of an axis.
func (p Point) Value(axis string) (Value, bool) {
	for _, s := range p.Settings {
		if s.Axis == axis {
			return s.Value, true
		}
	}
	return Value{}, false
}

// Args are the client flags for this point, after the fixed ones.
func (p Point) Args(fixed []string) []string {
	out := append([]string{}, fixed...)
	for _, s := range p.Settings {
		out = append(out, Args(s.Axis, s.Value)...)
	}
	return out
}

// Run is one planned test.
type Run struct {
	ID    string
	Seq   int // 0-based position in the campaign's order
	Point Point
	Rep   int // 1-based repetition
}

// RunID is a campaign run's ID: a hash of the campaign, the point and the
// repetition.
func RunID(campaign, pointKey string, rep int) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", campaign, pointKey, rep)))
	return hex.EncodeToString(h[:8])
}

// Points is the cross-product of the axes, for every target, the first
// axis varying slowest.
func (s *Spec) Points() []Point {
	points := []Point{{}}
	for _, a := range s.Axes {
		next := make([]Point, 0, len(points)*len(a.Values))
		for _, p := range points {
			for _, v := range a.Values {
				q := Point{Settings: append(append([]Setting{}, p.Settings...), Setting{a.Name, v})}
				next = append(next, q)
			}
		}
		points = next
	}
	var out []Point
	for _, t := range s.Targets {
		for _, p := range points {
			p.Target = t
			out = append(out, p)
		}
	}
	return out
}

// Plan lists every run in the order they run: the cross-product, each
// point repeated, then shuffled by the spec's shuffle key (repetitions spread
// over the campaign, so that a path's drift over the hours is not taken
// for an axis's effect) or left in sequence (repetitions of a point one
// after another).
func (s *Spec) Plan() []Run {
	var runs []Run
	for _, p := range s.Points() {
		for rep := 1; rep <= s.Repeat; rep++ {
			runs = append(runs, Run{ID: RunID(s.Name, p.Key(), rep), Point: p, Rep: rep})
		}
	}
	if s.Order == OrderShuffle {
		rng := rand.New(rand.NewPCG(uint64(s.ShuffleKey), 0x77697265706572)) // "wireper"
		rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	}
	for i := range runs {
		runs[i].Seq = i
	}
	return runs
}

// NewShuffleKey picks a shuffle key, to be recorded with the campaign.
func NewShuffleKey() int64 { return rand.Int64N(1<<53) + 1 }

// Estimate is how long runs take: each run's length (a UDPmon run lasts
// count × spacing at least), plus overhead per run for connecting and the
// server's report, plus the pause between runs.
func (s *Spec) Estimate(runs []Run, length func(Run) time.Duration, overhead time.Duration) time.Duration {
	var total time.Duration
	for i, r := range runs {
		d := length(r)
		if s.Count > 0 {
			d = 0
			if v, ok := r.Point.Value(AxisSpacing); ok && v.Num != nil {
				d = time.Duration(float64(s.Count) * *v.Num * float64(time.Second))
			}
		}
		total += d + overhead
		if i > 0 {
			total += s.Pause
		}
	}
	return total
}

// Missing returns the runs not yet finished, in plan order: what a
// resumed campaign runs.
func Missing(runs []Run, finished func(id string) bool) []Run {
	var out []Run
	for _, r := range runs {
		if !finished(r.ID) {
			out = append(out, r)
		}
	}
	return out
}
