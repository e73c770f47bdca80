package flowrun

import (
	"errors"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/hostmon"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

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
	return h
}

// Finish reports the change since the start; nil for a nil start.
func (h *HostCounterStart) Finish() *result.HostCounters {
	if h == nil {
		return nil
	}
	out := &result.HostCounters{Seconds: time.Since(h.at).Seconds()}
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
