package campaign

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wireperf/wireperf/internal/units"
)

// SameWindows says which window sizes (-w, bytes) the kernel grants
// alike: a request above net.core.rmem_max (or wmem_max) gets the limit,
// so on a host whose rmem_max is 4 MiB, -w 8M and -w 16M measure what -w
// 4M does, and a sweep's columns for them repeat it. One line per group;
// none when every window is below both limits (0: a limit unknown).
func SameWindows(windows []float64, rmemMax, wmemMax int64) []string {
	limit := rmemMax
	name := "net.core.rmem_max"
	if wmemMax > 0 && (limit <= 0 || wmemMax < limit) {
		limit, name = wmemMax, "net.core.wmem_max"
	}
	if limit <= 0 {
		return nil
	}
	var capped []float64
	for _, w := range windows {
		if w > float64(limit) {
			capped = append(capped, w)
		}
	}
	if len(capped) == 0 {
		return nil
	}
	sort.Float64s(capped)
	size := func(b float64) string { return strings.TrimSpace(units.FormatTransfer(b, units.AdaptiveBytes)) }
	var names []string
	for _, w := range capped {
		names = append(names, "-w "+size(w))
	}
	return []string{fmt.Sprintf("%s: %s is %s, so the kernel grants %s what it grants -w %s; their results repeat that window's",
		strings.Join(names, ", "), name, size(float64(limit)), strings.Join(names, " and "), size(float64(limit)))}
}

// Windows are the values of the spec's window axis, in bytes; nil
// without one.
func (s *Spec) Windows() []float64 {
	for _, a := range s.Axes {
		if a.Name != AxisWindow {
			continue
		}
		var out []float64
		for _, v := range a.Values {
			if v.Num != nil && *v.Num > 0 {
				out = append(out, *v.Num)
			}
		}
		return out
	}
	return nil
}
