package archiveview

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/campaign"
)

// Selection picks runs: the archive's filter, and the conditions on axes
// that the filter cannot say, checked on each run it returns.
type Selection struct {
	Filter archive.Filter
	conds  []axisCond
}

// axisCond is one --where on an axis: the axis and its value's key.
type axisCond struct{ axis, key string }

// Where adds the --where KEY=VALUE conditions to f: source, state,
// campaign and host go into the filter, and any campaign axis becomes a
// condition on the runs. An error names the condition that is wrong.
func Where(f archive.Filter, where []string) (Selection, error) {
	sel := Selection{Filter: f}
	for _, w := range where {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return sel, fmt.Errorf("--where %q: want KEY=VALUE", w)
		}
		switch k {
		case "source":
			sel.Filter.Source = v
		case "state":
			sel.Filter.State = v
		case "campaign":
			sel.Filter.Campaign = v
		case "host":
			sel.Filter.Host = v
		default:
			axis, known := campaign.CanonicalAxis(k)
			if !known {
				return sel, fmt.Errorf("--where %q: want source, state, campaign, host or an axis (%s)", w, strings.Join(campaign.AxisNames(), ", "))
			}
			val, err := campaign.ParseValue(axis, v)
			if err != nil {
				return sel, fmt.Errorf("--where %q: %v", w, err)
			}
			sel.conds = append(sel.conds, axisCond{axis, val.Key()})
		}
	}
	return sel, nil
}

// Keep is the runs, of those the filter returned, that meet every
// condition on their axes.
func (s Selection) Keep(runs []*archive.Run) []*archive.Run {
	var kept []*archive.Run
	for _, r := range runs {
		if s.keeps(r) {
			kept = append(kept, r)
		}
	}
	return kept
}

func (s Selection) keeps(r *archive.Run) bool {
	for _, c := range s.conds {
		a, ok := r.Axes[c.axis]
		if !ok || a.Key() != c.key {
			return false
		}
	}
	return true
}
