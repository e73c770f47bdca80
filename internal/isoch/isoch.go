// Package isoch is iperf 2's isochronous traffic (--isochronous FPS:MEAN,STDEV
// and --ipg): the frames' description and its parsing, the draw of each
// frame's size and the frames' schedule, shared by the multicast sender
// (iperf 2's wire) and the native UDP sender.
package isoch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// Frames is an isochronous sender's traffic, iperf 2's --isochronous: FPS
// frames a second, each of a size drawn from a log-normal distribution
// whose mean and standard deviation are given as rates (bits a second:
// a frame's mean size is Mean/FPS/8 bytes), its datagrams IPG apart.
type Frames struct {
	FPS   float64       `json:"fps"`
	Mean  float64       `json:"mean_bps"`
	Stdev float64       `json:"stdev_bps,omitempty"`
	IPG   time.Duration `json:"ipg_ns,omitempty"`
	// RNGState starts the frame sizes' random numbers (a test repeats
	// its sizes with it); 0 starts from the clock.
	RNGState uint64 `json:"-"`
}

// Limits of Check.
const (
	MaxFPS = 10000
	MaxIPG = time.Second
	// MaxFrameBytes caps a drawn frame's size.
	MaxFrameBytes = 1 << 30
)

// Check says what is wrong with f, if anything.
func (f Frames) Check() error {
	switch {
	case !(f.FPS > 0) || f.FPS > MaxFPS:
		return fmt.Errorf("%g frames a second: want more than 0, at most %d", f.FPS, MaxFPS)
	case !(f.Mean > 0) || f.Stdev < 0 || math.IsInf(f.Mean, 0) || math.IsInf(f.Stdev, 0) || math.IsNaN(f.Stdev):
		return errors.New("a frame rate's mean must be positive and its deviation not negative")
	case f.IPG < 0 || f.IPG > MaxIPG:
		return errors.New("--ipg: 0 to 1000 ms")
	}
	return nil
}

// Period is the time between frames.
func (f Frames) Period() time.Duration { return time.Duration(float64(time.Second) / f.FPS) }

// Parse reads iperf 2's --isochronous FPS:MEAN,STDEV: frames a second, and
// the mean and standard deviation of the frames' sizes as rates in bits a
// second (k, m, g: powers of 1000). iperf 2 reads an upper-case suffix as
// bytes a second; that is refused here rather than read one way or the
// other, and so is its p (packets) suffix.
func Parse(s string) (Frames, error) {
	bad := func(why string) (Frames, error) {
		return Frames{}, fmt.Errorf("--isochronous %s: %s", s, why)
	}
	fpsText, load, ok := strings.Cut(s, ":")
	if !ok {
		return bad("want FPS:MEAN,STDEV, e.g. 60:20m,0")
	}
	fps, err := strconv.ParseFloat(fpsText, 64)
	if err != nil {
		return bad("frames a second: want a number")
	}
	meanText, stdevText, _ := strings.Cut(load, ",")
	if stdevText == "" {
		stdevText = "0"
	}
	var vals [2]float64
	for i, t := range []string{meanText, stdevText} {
		if strings.ContainsAny(t, "KMGTBp") {
			return bad("give bits a second with k, m or g (iperf 2 reads K, M, G as bytes a second and p as packets)")
		}
		if vals[i], err = units.ParseRate(t); err != nil {
			return bad(err.Error())
		}
	}
	f := Frames{FPS: fps, Mean: vals[0], Stdev: vals[1]}
	if err := f.Check(); err != nil {
		return bad(err.Error())
	}
	return f, nil
}

// IPGOf is --ipg's milliseconds as a gap, checked.
func IPGOf(ms float64) (time.Duration, error) {
	if !(ms >= 0) || ms > float64(MaxIPG/time.Millisecond) {
		return 0, fmt.Errorf("--ipg %g: 0 to 1000 ms", ms)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// Sizer draws frame sizes in bytes.
type Sizer struct {
	fps, mean, mu, sigma float64
	rng                  *rand.Rand
}

// NewSizer draws the sizes of f's frames.
func NewSizer(f Frames) *Sizer {
	state := f.RNGState
	if state == 0 {
		state = uint64(time.Now().UnixNano())
	}
	z := &Sizer{fps: f.FPS, mean: f.Mean, rng: rand.New(rand.NewPCG(state, state^0x9e3779b97f4a7c15))}
	if f.Stdev > 0 { // the log-normal with that mean and deviation
		v := math.Log(1 + f.Stdev*f.Stdev/(f.Mean*f.Mean))
		z.mu, z.sigma = math.Log(f.Mean)-v/2, math.Sqrt(v)
	}
	return z
}

// Next is a frame's size in bytes, at least min and at most
// MaxFrameBytes.
func (z *Sizer) Next(min int) int {
	bits := z.mean
	if z.sigma > 0 {
		bits = math.Exp(z.mu + z.sigma*z.rng.NormFloat64())
	}
	n := bits / z.fps / 8
	if n > MaxFrameBytes {
		n = MaxFrameBytes
	}
	return max(int(n), min)
}

// Due is when frame k (from 0) is due: k periods after start, computed
// from the start each time so that no error accumulates.
func (f Frames) Due(start time.Time, k int64) time.Time {
	return start.Add(time.Duration(float64(k) * float64(time.Second) / f.FPS))
}

// Slip is iperf 2's rule for a sender late by more than a period: the
// frames whose whole period has passed at now are skipped. It returns
// the frame to send next (k or later) and how many were skipped.
func (f Frames) Slip(start, now time.Time, k int64) (next, skipped int64) {
	period := f.Period()
	if late := now.Sub(f.Due(start, k)); period > 0 && late > period {
		skipped = int64(late / period)
	}
	return k + skipped, skipped
}
