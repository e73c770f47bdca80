package hostmon

import (
	"fmt"
	"strconv"
	"strings"
)

// CPUStat is one cpu line of /proc/stat, in USER_HZ ticks.
type CPUStat struct {
	Name                                                  string
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Columns of a cpu line: user nice system idle have been there forever,
// iowait, irq, softirq and steal came in 2.6, guest and guest_nice (already
// counted inside user and nice) by 2.6.33. Anything past ten is a format
// we do not know, and guessing would skew the split, so it is an error.
const (
	minCPUColumns = 4
	maxCPUColumns = 10
)

// ParseCPUStat parses the cpu lines of /proc/stat: the aggregate "cpu"
// first, then cpu0, cpu1... in file order. Other lines are skipped.
func ParseCPUStat(data []byte) ([]CPUStat, error) {
	var out []CPUStat
	seen := make(map[string]bool)
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 0 || !isCPUName(f[0]) {
			continue
		}
		name, cols := f[0], f[1:]
		if len(out) == 0 && name != "cpu" {
			return nil, fmt.Errorf("stat: %s before the aggregate cpu line", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("stat: %s appears twice", name)
		}
		seen[name] = true
		if len(cols) < minCPUColumns || len(cols) > maxCPUColumns {
			return nil, fmt.Errorf("stat: %s has %d columns, want %d to %d", name, len(cols), minCPUColumns, maxCPUColumns)
		}
		var v [maxCPUColumns]uint64
		for i, c := range cols {
			n, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("stat: %s column %d: %w", name, i+1, err)
			}
			v[i] = n
		}
		out = append(out, CPUStat{Name: name, User: v[0], Nice: v[1], System: v[2], Idle: v[3],
			IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("stat: no cpu lines")
	}
	return out, nil
}

// isCPUName matches "cpu" and "cpu<N>".
func isCPUName(s string) bool {
	rest, ok := strings.CutPrefix(s, "cpu")
	if !ok {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}

// CPUSplit is where one CPU's time went between two samples, in percent of
// its ticks. User includes nice (both are user-mode work), Idle includes
// iowait (the CPU was free to run anything), Other is steal. The six sum to
// 100, or are all zero when no ticks passed.
type CPUSplit struct {
	Name                                    string
	User, System, SoftIRQ, IRQ, Idle, Other float64
}

// Split returns the split of each CPU present in both samples, in the
// order of after. A counter that went backwards (CPU hot-plug) counts as 0.
func Split(before, after []CPUStat) []CPUSplit {
	prev := make(map[string]CPUStat, len(before))
	for _, s := range before {
		prev[s.Name] = s
	}
	out := make([]CPUSplit, 0, len(after))
	for _, a := range after {
		b, ok := prev[a.Name]
		if !ok {
			continue
		}
		user := delta(a.User, b.User) + delta(a.Nice, b.Nice)
		system := delta(a.System, b.System)
		softirq := delta(a.SoftIRQ, b.SoftIRQ)
		irq := delta(a.IRQ, b.IRQ)
		idle := delta(a.Idle, b.Idle) + delta(a.IOWait, b.IOWait)
		other := delta(a.Steal, b.Steal)
		total := float64(user + system + softirq + irq + idle + other)
		s := CPUSplit{Name: a.Name}
		if total > 0 {
			pct := func(n uint64) float64 { return 100 * float64(n) / total }
			s.User, s.System, s.SoftIRQ = pct(user), pct(system), pct(softirq)
			s.IRQ, s.Idle, s.Other = pct(irq), pct(idle), pct(other)
		}
		out = append(out, s)
	}
	return out
}

// delta is a - b, or 0 when the counter went backwards.
func delta(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
