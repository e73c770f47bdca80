package flowrun

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// minHostSample is the shortest period a host sample covers, so that
// short intervals (-i 0.01) don't make a sample each.
const minHostSample = time.Second

// maxHostSamples bounds the series an end reports: it travels in the
// end's report, whose JSON shape is bounded (proto.MaxArrayElements).
// A longer test merges neighbouring samples (thinHostSamples).
const maxHostSamples = 1024

// busiestIRQLines is how many interrupt lines an end reports.
const busiestIRQLines = 8

// HostCounterStart is a host's CPU and interrupt counters when a test
// began, taken when the spec asks for them (spec.HostCounters).
type HostCounterStart struct {
	at   time.Time
	cpus []hostmon.CPUStat
	irqs []hostmon.IRQLine
	mem  int64 // memory in use at the start; 0 where unknown
	errs []string

	// The host's use per interval (Sample), from the CPU counters at the
	// previous sample.
	mu      sync.Mutex
	last    []hostmon.CPUStat
	samples []result.HostSample
}

// StartHostCounters samples the counters now; nil unless s asks for
// them.
func StartHostCounters(s spec.Spec) *HostCounterStart {
	if !s.HostCounters {
		return nil
	}
	h := &HostCounterStart{at: time.Now()}
	var err error
	if h.cpus, err = hostmon.ReadCPUStat(); err != nil {
		h.errs = append(h.errs, unavailable(err))
	}
	if h.irqs, err = hostmon.ReadInterrupts(); err != nil {
		h.errs = append(h.errs, unavailable(err))
	}
	h.mem, _ = hostmon.ReadMemUsed() // unknown is 0, and the CPU errors already say why
	h.last = h.cpus
	return h
}

// Sample records the host's CPU split since the last sample and its
// memory in use now, at the end of an interval. A nil start, or a host
// whose CPU counters can't be read, records nothing.
func (h *HostCounterStart) Sample() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sampleLocked(minHostSample)
}

// sampleLocked samples unless the last sample is more recent than least
// (the end's own sample, after the last interval, takes any period over
// /proc/stat's 10 ms tick).
func (h *HostCounterStart) sampleLocked(least time.Duration) {
	if h.last == nil {
		return
	}
	t := time.Since(h.at).Seconds()
	if n := len(h.samples); n > 0 && t-h.samples[n-1].T < least.Seconds() {
		return // short intervals, or a test that ends on an interval's end
	}
	now, err := hostmon.ReadCPUStat()
	if err != nil {
		return
	}
	split := hostmon.Split(h.last, now)
	h.last = now
	if len(split) == 0 || split[0].Name != "cpu" {
		return
	}
	s := result.HostSample{T: t, User: split[0].User, System: split[0].System, SoftIRQ: split[0].SoftIRQ}
	s.MemUsedBytes, _ = hostmon.ReadMemUsed()
	h.samples = append(h.samples, s)
	if len(h.samples) > maxHostSamples {
		h.samples = thinHostSamples(h.samples)
	}
}

// thinHostSamples merges each pair of neighbouring samples into one over
// both periods: the CPU shares weighted by each period's length, the
// memory in use the larger. An odd last sample stays as it is.
func thinHostSamples(in []result.HostSample) []result.HostSample {
	out := in[:0]
	prevT := 0.0
	for i := 0; i < len(in); i += 2 {
		if i+1 == len(in) {
			out = append(out, in[i])
			break
		}
		a, b := in[i], in[i+1]
		da, db := a.T-prevT, b.T-a.T
		w := func(x, y float64) float64 {
			if da+db <= 0 {
				return (x + y) / 2
			}
			return (x*da + y*db) / (da + db)
		}
		prevT = b.T
		out = append(out, result.HostSample{T: b.T, User: w(a.User, b.User), System: w(a.System, b.System),
			SoftIRQ: w(a.SoftIRQ, b.SoftIRQ), MemUsedBytes: max(a.MemUsedBytes, b.MemUsedBytes)})
	}
	return out
}

// Finish reports the change since the start; nil for a nil start.
func (h *HostCounterStart) Finish() *result.HostCounters {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	h.sampleLocked(10 * time.Millisecond) // the period since the last interval's end
	out := &result.HostCounters{Seconds: time.Since(h.at).Seconds(), Samples: h.samples}
	h.mu.Unlock()
	errs := append([]string(nil), h.errs...)
	if h.cpus != nil {
		if now, err := hostmon.ReadCPUStat(); err != nil {
			errs = append(errs, unavailable(err))
		} else {
			for _, s := range hostmon.Split(h.cpus, now) {
				out.CPUs = append(out.CPUs, result.CPUSplit{
					Name: s.Name, User: s.User, System: s.System, SoftIRQ: s.SoftIRQ, IRQ: s.IRQ, Idle: s.Idle, Other: s.Other,
				})
			}
		}
	}
	if h.irqs != nil {
		if now, err := hostmon.ReadInterrupts(); err != nil {
			errs = append(errs, unavailable(err))
		} else {
			for _, d := range hostmon.InterruptDeltas(h.irqs, now, busiestIRQLines) {
				out.Interrupts = append(out.Interrupts, result.IRQDelta{IRQ: d.IRQ, Desc: d.Desc, Total: d.Total, PerCPU: d.PerCPU})
			}
		}
	}
	out.MemUsedBytes = h.mem
	if now, err := hostmon.ReadMemUsed(); err == nil {
		out.MemUsedBytes = max(out.MemUsedBytes, now)
	}
	out.Unavailable = strings.Join(errs, "; ")
	return out
}

func unavailable(err error) string {
	if errors.Is(err, hostmon.ErrUnsupported) {
		return err.Error()
	}
	return "host counters: " + err.Error()
}

// enableArrivals has the UDP receivers keep arrival histograms when the
// spec asks for them (spec.UDPHistograms). Call before the flows start.
func (r *Runner) enableArrivals() {
	if !r.spec.UDPHistograms {
		return
	}
	for _, f := range r.flows {
		if uf, ok := f.(*UDPFlow); ok && uf.rcv != nil {
			uf.rcv.EnableArrivals()
		}
	}
}

// udpArrivals are the receivers' arrival histograms, once their totals
// are in.
func (r *Runner) udpArrivals() []result.UDPArrivals {
	if !r.spec.UDPHistograms {
		return nil
	}
	var out []result.UDPArrivals
	for _, f := range r.flows {
		if uf, ok := f.(*UDPFlow); ok && uf.rcv != nil {
			if a, ok := uf.rcv.Arrivals(); ok {
				a.StreamID = f.ID()
				out = append(out, a)
			}
		}
	}
	return out
}
