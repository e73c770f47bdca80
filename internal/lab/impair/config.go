// Package impair is the core of wireperf's WAN emulator: a per-direction
// pipeline that decides, for every packet, whether it is lost, duplicated,
// queued behind a rate cap, delayed, jittered or re-ordered, and when it
// leaves. It has no operating-system dependencies: time is an int64
// nanosecond clock passed in by the caller, randomness comes from a
// PCG generator, and packets are opaque values of a type parameter. The
// Linux TUN router in package lab drives it with real packets and a
// monotonic clock; the unit tests drive it with a fake clock.
//
// A packet that enters a Direction goes through these stages, in order:
//
//  1. loss: Bernoulli loss with probability Loss, and/or Gilbert-Elliott
//     burst loss (GE). A packet lost by either is dropped and counted in
//     DroppedLoss.
//  2. rate cap: when Rate > 0 the packet is serialised at Rate bit/s,
//     counting Overhead extra bytes per packet, behind the packets already
//     waiting. If the bytes still waiting plus this packet exceed
//     QueueLimit, it is dropped and counted in DroppedQueue (tail drop).
//  3. duplication: with probability Duplicate the packet leaves twice, back
//     to back (counted once in Duplicated; both copies count in Out).
//  4. delay: the packet leaves Delay plus a jitter sample after its
//     serialisation ends. Jitter is uniform in [-Jitter, +Jitter] or normal
//     with standard deviation Jitter; the total is never negative. With
//     KeepOrder a packet never leaves before one that arrived earlier (its
//     departure is pushed back instead), so jitter does not re-order.
//  5. re-ordering: with probability Reorder a packet, when due, is held
//     back until ReorderGap later packets of the same direction have left
//     (ReorderGap 1 swaps neighbours), or at most ReorderHold.
//
// Counters are exact. Reordered counts the packets that leave after a packet
// that arrived later than them (RFC 4737's definition, applied to arrival
// order), whatever caused it: a re-ordering hold or jitter without
// KeepOrder. A receiver that numbers its packets in sending order therefore
// counts exactly the same re-orderings, provided nothing re-orders them
// before the emulator.
package impair

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// Distribution is the shape of the jitter added to the fixed delay.
type Distribution uint8

const (
	// Uniform jitter is uniform in [-Jitter, +Jitter].
	Uniform Distribution = iota
	// Normal jitter is normal with mean 0 and standard deviation Jitter.
	Normal
)

func (d Distribution) String() string {
	switch d {
	case Uniform:
		return "uniform"
	case Normal:
		return "normal"
	}
	return fmt.Sprintf("Distribution(%d)", uint8(d))
}

// GilbertElliott is a two-state Markov burst-loss model. Before each packet
// the state moves from good to bad with probability P and from bad to good
// with probability R; the packet is then lost with probability LossBad in the
// bad state and LossGood in the good state.
//
// In the classic notation, LossBad = 1-h and LossGood = 1-k. The simple
// Gilbert model is LossBad = 1, LossGood = 0 (see Gilbert); its loss runs
// are geometric with mean 1/R and its loss rate is P/(P+R).
type GilbertElliott struct {
	P        float64 // good → bad transition probability
	R        float64 // bad → good transition probability
	LossBad  float64 // loss probability in the bad state (1-h)
	LossGood float64 // loss probability in the good state (1-k)
}

// Gilbert returns the simple Gilbert model: every packet is lost in the bad
// state and none in the good state.
func Gilbert(p, r float64) *GilbertElliott {
	return &GilbertElliott{P: p, R: r, LossBad: 1, LossGood: 0}
}

// BadShare is the stationary probability of the bad state, P/(P+R).
func (g GilbertElliott) BadShare() float64 {
	if g.P+g.R == 0 {
		return 0
	}
	return g.P / (g.P + g.R)
}

// ExpectedLossRate is the long-run fraction of packets lost.
func (g GilbertElliott) ExpectedLossRate() float64 {
	b := g.BadShare()
	return b*g.LossBad + (1-b)*g.LossGood
}

// ExpectedLossRun is the mean length of a run of consecutive lost packets.
// It is exact for the model as implemented (transition, then loss draw): a
// run starts where a delivered packet is followed by a lost one, and it
// lasts while packets keep being lost, which is a two-state absorbing chain
// solved in closed form. It returns +Inf when a run never ends and NaN when
// no packet is ever lost.
func (g GilbertElliott) ExpectedLossRun() float64 {
	// States: 0 = good, 1 = bad. T[i][j] is the transition matrix and l the
	// per-state loss probabilities.
	T := [2][2]float64{{1 - g.P, g.P}, {g.R, 1 - g.R}}
	l := [2]float64{g.LossGood, g.LossBad}
	var pi [2]float64
	if g.P+g.R == 0 {
		pi = [2]float64{1, 0} // the chain never leaves its start state (good)
	} else {
		pi = [2]float64{g.R / (g.P + g.R), g.P / (g.P + g.R)}
	}
	// w[j]: probability that a delivered packet in state i is followed by a
	// lost packet in state j (the start of a run), normalised below.
	var w [2]float64
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			w[j] += pi[i] * (1 - l[i]) * T[i][j] * l[j]
		}
	}
	s := w[0] + w[1]
	if s == 0 {
		if g.ExpectedLossRate() > 0 {
			return math.Inf(1)
		}
		return math.NaN()
	}
	w[0], w[1] = w[0]/s, w[1]/s
	// M[i][j] = T[i][j]*l[j]: the run continues into state j. The expected
	// run length from the first lost packet is w·(I-M)^-1·1.
	a, b := 1-T[0][0]*l[0], -T[0][1]*l[1]
	c, d := -T[1][0]*l[0], 1-T[1][1]*l[1]
	det := a*d - b*c
	if det == 0 {
		return math.Inf(1)
	}
	// (I-M)^-1·1 = [ (d - b), (a - c) ] / det
	v0 := (d - b) / det
	v1 := (a - c) / det
	return w[0]*v0 + w[1]*v1
}

// Config is the impairment of one direction. The zero value passes packets
// through untouched (they are still counted).
type Config struct {
	Delay        time.Duration   // fixed one-way delay
	Jitter       time.Duration   // uniform half-width or normal standard deviation
	Distribution Distribution    // shape of the jitter
	KeepOrder    bool            // jitter never re-orders packets
	Loss         float64         // Bernoulli loss probability, 0..1
	GE           *GilbertElliott // burst loss; nil for none
	Reorder      float64         // probability that a packet is held back, 0..1
	ReorderGap   int             // how many later packets overtake a held one; 0 means 1
	ReorderHold  time.Duration   // longest hold when no later packet comes; 0 means DefaultReorderHold
	Duplicate    float64         // duplication probability, 0..1
	Rate         float64         // rate cap in bit/s; 0 for none
	Overhead     int             // bytes added to each packet for the rate cap (framing)
	QueueLimit   int             // bytes that may wait for the rate cap; 0 means DefaultQueueLimit
}

// DefaultReorderHold bounds how long a re-ordered packet waits for later
// packets to overtake it.
const DefaultReorderHold = 100 * time.Millisecond

// DefaultQueueLimit returns the queue limit used when QueueLimit is 0: the
// rate cap's bytes for 50 ms, and at least 64 KiB.
func (c Config) DefaultQueueLimit() int {
	q := int(c.Rate / 8 * 0.05)
	if q < 64<<10 {
		q = 64 << 10
	}
	return q
}

// MaxDelay is the most one packet of mtu bytes can spend in the
// direction on time: the delay, the jitter's reach, a full rate-cap queue
// and its own serialisation, and a re-ordering hold. Normal jitter has no
// bound; four standard deviations are taken (one packet in 30,000 goes
// beyond). Without a rate cap there is no queue to wait in.
func (c Config) MaxDelay(mtu int) time.Duration {
	d := c.Delay
	switch {
	case c.Jitter <= 0:
	case c.Distribution == Uniform:
		d += c.Jitter
	default:
		d += 4 * c.Jitter
	}
	if c.Rate > 0 {
		bits := float64(c.queueLimit()+mtu+c.Overhead) * 8
		d += time.Duration(bits / c.Rate * float64(time.Second))
	}
	if c.Reorder > 0 {
		hold := c.ReorderHold
		if hold <= 0 {
			hold = DefaultReorderHold
		}
		d += hold
	}
	return d
}

func (c Config) queueLimit() int {
	if c.QueueLimit > 0 {
		return c.QueueLimit
	}
	return c.DefaultQueueLimit()
}

func (c Config) reorderGap() int {
	if c.ReorderGap > 0 {
		return c.ReorderGap
	}
	return 1
}

func (c Config) reorderHold() time.Duration {
	if c.ReorderHold > 0 {
		return c.ReorderHold
	}
	return DefaultReorderHold
}

// MaxHeldBytes bounds the bytes a Direction holds at once when the rate cap
// is set: the queue limit plus the rate times the longest delay (jitter
// counts three standard deviations for normal jitter; the tail beyond is
// negligible) and the re-ordering hold. Without a rate cap there is no
// bound from the configuration; the caller must cap memory itself.
func (c Config) MaxHeldBytes() (int64, bool) {
	if c.Rate <= 0 {
		return 0, false
	}
	d := c.Delay + c.Jitter
	if c.Distribution == Normal {
		d = c.Delay + 3*c.Jitter
	}
	if c.Reorder > 0 {
		d += c.reorderHold()
	}
	b := c.Rate / 8 * d.Seconds()
	return int64(b) + int64(c.queueLimit()), true
}

// LateSlack is how late a router may fall behind its departures (its
// writer descheduled) before the memory limit, rather than the emulated
// path, drops packets.
const LateSlack = time.Second

// DefaultMemoryLimit is the memory limit a router sets when it is given
// none: twice the most a configured path holds (MaxHeldBytes), plus what
// arrives at the rate cap during LateSlack, plus 16 MiB; 1 GiB without a
// rate cap, which bounds nothing else. On a path the configuration
// describes the limit is then never reached: it only catches what the
// configuration does not bound, so a run that counts DroppedLimit was
// misconfigured or had a router that could not keep up for a second.
func (c Config) DefaultMemoryLimit() int64 {
	b, ok := c.MaxHeldBytes()
	if !ok {
		return 1 << 30
	}
	return 2*b + int64(c.Rate/8*LateSlack.Seconds()) + 16<<20
}

func checkProb(name string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("impair: %s %v is not a probability in [0, 1]", name, p)
	}
	return nil
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.Delay < 0 || c.Jitter < 0 || c.ReorderHold < 0 {
		return errors.New("impair: negative delay, jitter or reorder hold")
	}
	if c.Delay > time.Hour || c.Jitter > time.Hour || c.ReorderHold > time.Hour {
		return errors.New("impair: delay, jitter and reorder hold must be at most 1h")
	}
	if c.Distribution > Normal {
		return fmt.Errorf("impair: unknown jitter distribution %d", c.Distribution)
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"loss", c.Loss}, {"reorder", c.Reorder}, {"duplicate", c.Duplicate}} {
		if err := checkProb(p.n, p.v); err != nil {
			return err
		}
	}
	if c.GE != nil {
		for _, p := range []struct {
			n string
			v float64
		}{{"ge p", c.GE.P}, {"ge r", c.GE.R}, {"ge loss-bad", c.GE.LossBad}, {"ge loss-good", c.GE.LossGood}} {
			if err := checkProb(p.n, p.v); err != nil {
				return err
			}
		}
	}
	if c.ReorderGap < 0 || c.ReorderGap > 1<<20 {
		return fmt.Errorf("impair: reorder gap %d out of range [0, 1048576]", c.ReorderGap)
	}
	if math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0 {
		return fmt.Errorf("impair: rate %v is not a finite non-negative bit rate", c.Rate)
	}
	if c.Rate > 0 && c.Rate < 8 {
		return fmt.Errorf("impair: rate %v bit/s is below 1 byte/s", c.Rate)
	}
	if c.Overhead < 0 || c.Overhead > 1<<16 {
		return fmt.Errorf("impair: overhead %d out of range [0, 65536]", c.Overhead)
	}
	if c.QueueLimit < 0 {
		return fmt.Errorf("impair: negative queue limit %d", c.QueueLimit)
	}
	return nil
}

// String renders c in the form ParseConfig reads, listing only the fields
// that differ from the zero value. The zero Config renders as "none".
func (c Config) String() string {
	return c.render(func(q int) string { return units.SizeString(int64(q)) })
}

// Text renders c for people: as String, but the queue limit in a byte
// unit ("queue=6.10 MBytes" where String says "queue=6250k").
func (c Config) Text() string {
	return c.render(func(q int) string { return strings.TrimSpace(units.FormatTransfer(float64(q), 'A')) })
}

// render lists the fields that differ from the zero value, the queue
// limit as queue prints it.
func (c Config) render(queue func(int) string) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if c.Delay != 0 {
		add("delay", c.Delay.String())
	}
	if c.Jitter != 0 {
		add("jitter", c.Jitter.String())
	}
	if c.Distribution != Uniform {
		add("dist", c.Distribution.String())
	}
	if c.KeepOrder {
		parts = append(parts, "keeporder")
	}
	if c.Loss != 0 {
		add("loss", fmtProb(c.Loss))
	}
	if c.GE != nil {
		add("ge", fmtProb(c.GE.P)+"/"+fmtProb(c.GE.R)+"/"+fmtProb(c.GE.LossBad)+"/"+fmtProb(c.GE.LossGood))
	}
	if c.Reorder != 0 {
		add("reorder", fmtProb(c.Reorder))
	}
	if c.ReorderGap != 0 {
		add("gap", strconv.Itoa(c.ReorderGap))
	}
	if c.ReorderHold != 0 {
		add("hold", c.ReorderHold.String())
	}
	if c.Duplicate != 0 {
		add("dup", fmtProb(c.Duplicate))
	}
	if c.Rate != 0 {
		add("rate", units.RateString(c.Rate))
	}
	if c.Overhead != 0 {
		add("overhead", strconv.Itoa(c.Overhead))
	}
	if c.QueueLimit != 0 {
		add("queue", queue(c.QueueLimit))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// fmtProb prints a probability exactly (as a fraction, which ParsePercent
// reads back bit for bit).
func fmtProb(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }

// ParseConfig reads a comma- or space-separated list of settings:
//
//	delay=107.5ms jitter=1ms dist=uniform|normal keeporder
//	loss=0.1%  ge=P/R[/LOSSBAD[/LOSSGOOD]]  (LOSSBAD defaults to 1, LOSSGOOD to 0)
//	reorder=0.5% gap=3 hold=50ms  dup=0.1%
//	rate=1g overhead=38 queue=1M
//
// Probabilities are fractions ("0.001") or percentages ("0.1%"); rates and
// sizes are read by units.ParseRate and units.ParseSize, as every wireperf
// flag reads them ("1g" and "1G" are 10^9 bit/s, "1M" 2^20 bytes). "none" or an
// empty string is the zero Config.
func ParseConfig(s string) (Config, error) {
	var c Config
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	for _, f := range fields {
		if f == "none" {
			continue
		}
		if f == "keeporder" {
			c.KeepOrder = true
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return Config{}, fmt.Errorf("impair: %q is not key=value", f)
		}
		var err error
		switch k {
		case "delay":
			c.Delay, err = parseDur(v)
		case "jitter":
			c.Jitter, err = parseDur(v)
		case "hold":
			c.ReorderHold, err = parseDur(v)
		case "dist":
			switch v {
			case "uniform":
				c.Distribution = Uniform
			case "normal":
				c.Distribution = Normal
			default:
				err = fmt.Errorf("unknown distribution %q (uniform or normal)", v)
			}
		case "keeporder":
			c.KeepOrder, err = strconv.ParseBool(v)
		case "loss":
			c.Loss, err = ParsePercent(v)
		case "reorder":
			c.Reorder, err = ParsePercent(v)
		case "dup", "duplicate":
			c.Duplicate, err = ParsePercent(v)
		case "gap":
			c.ReorderGap, err = strconv.Atoi(v)
		case "ge":
			c.GE, err = parseGE(v)
		case "rate":
			c.Rate, err = units.ParseRate(v)
		case "overhead":
			c.Overhead, err = strconv.Atoi(v)
		case "queue":
			var n int64
			n, err = units.ParseSize(v)
			if err == nil && n > math.MaxInt32 {
				err = errors.New("queue limit above 2 GiB")
			}
			c.QueueLimit = int(n)
		default:
			err = errors.New("unknown setting")
		}
		if err != nil {
			return Config{}, fmt.Errorf("impair: %s: %w", f, err)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func parseDur(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, errors.New("negative duration")
	}
	return d, nil
}

func parseGE(s string) (*GilbertElliott, error) {
	ps := strings.Split(s, "/")
	if len(ps) < 2 || len(ps) > 4 {
		return nil, errors.New("want P/R[/LOSSBAD[/LOSSGOOD]]")
	}
	g := &GilbertElliott{LossBad: 1}
	dst := []*float64{&g.P, &g.R, &g.LossBad, &g.LossGood}
	for i, p := range ps {
		v, err := ParsePercent(p)
		if err != nil {
			return nil, err
		}
		*dst[i] = v
	}
	return g, nil
}

// ParsePercent reads a probability written as a percentage ("0.1%") or a
// fraction ("0.001"). The result must lie in [0, 1].
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("bad probability %q", s)
	}
	if pct {
		v /= 100
	}
	if math.IsNaN(v) || v < 0 || v > 1 {
		return 0, fmt.Errorf("probability %q is outside [0, 1]", s)
	}
	return v, nil
}
