package hostmon

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IRQLine is one line of /proc/interrupts: the IRQ number or name ("NMI",
// "LOC"), the description after the counts (chip, hardware IRQ, trigger,
// device, spaces collapsed) and the count on each CPU in header order.
// x86's ERR and MIS are system-wide totals: their PerCPU has one entry.
type IRQLine struct {
	IRQ    string
	Desc   string
	PerCPU []uint64
}

// ParseInterrupts parses /proc/interrupts. The header names the online
// CPUs; every line must have one count per CPU, or a single count and
// nothing else (a system-wide total).
func ParseInterrupts(data []byte) ([]IRQLine, error) {
	var ncpu int
	var out []IRQLine
	seen := make(map[string]bool)
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if ncpu == 0 {
			for _, h := range f {
				if !isCPUColumn(h) {
					return nil, fmt.Errorf("interrupts: line %d: header missing (got %q)", n, h)
				}
			}
			ncpu = len(f)
			continue
		}
		irq, ok := strings.CutSuffix(f[0], ":")
		if !ok || irq == "" {
			return nil, fmt.Errorf("interrupts: line %d: %q is not an IRQ label", n, f[0])
		}
		if seen[irq] {
			return nil, fmt.Errorf("interrupts: line %d: IRQ %s appears twice", n, irq)
		}
		seen[irq] = true
		rest := f[1:]
		counts := make([]uint64, 0, min(ncpu, len(rest)))
		for len(counts) < ncpu && len(rest) > 0 && isDigits(rest[0]) {
			v, err := strconv.ParseUint(rest[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("interrupts: line %d: IRQ %s: %w", n, irq, err)
			}
			counts = append(counts, v)
			rest = rest[1:]
		}
		if len(counts) != ncpu && !(len(counts) == 1 && len(rest) == 0) {
			return nil, fmt.Errorf("interrupts: line %d: IRQ %s has %d counts for %d CPUs", n, irq, len(counts), ncpu)
		}
		out = append(out, IRQLine{IRQ: irq, Desc: strings.Join(rest, " "), PerCPU: counts})
	}
	if ncpu == 0 {
		return nil, fmt.Errorf("interrupts: header missing")
	}
	return out, nil
}

// isCPUColumn matches a header column, "CPU<N>".
func isCPUColumn(s string) bool {
	rest, ok := strings.CutPrefix(s, "CPU")
	return ok && isDigits(rest)
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IRQDelta is how many interrupts one line took between two samples.
type IRQDelta struct {
	IRQ, Desc string
	PerCPU    []uint64
	Total     uint64
}

// InterruptDeltas returns the `top` busiest lines by total delta,
// descending (ties by IRQ name); top <= 0 means all. Lines that took no
// interrupts are left out. A line new in after counts from zero; a count
// that went backwards, or a CPU column missing from before, counts as 0.
func InterruptDeltas(before, after []IRQLine, top int) []IRQDelta {
	prev := make(map[string][]uint64, len(before))
	for _, l := range before {
		prev[l.IRQ] = l.PerCPU
	}
	var out []IRQDelta
	for _, l := range after {
		b := prev[l.IRQ]
		d := IRQDelta{IRQ: l.IRQ, Desc: l.Desc, PerCPU: make([]uint64, len(l.PerCPU))}
		for i, v := range l.PerCPU {
			var old uint64
			if i < len(b) {
				old = b[i]
			}
			d.PerCPU[i] = delta(v, old)
			d.Total += d.PerCPU[i]
		}
		if d.Total > 0 {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(x, y IRQDelta) int {
		if c := cmp.Compare(y.Total, x.Total); c != 0 {
			return c
		}
		return cmp.Compare(x.IRQ, y.IRQ)
	})
	if top > 0 && len(out) > top {
		out = out[:top]
	}
	return out
}
