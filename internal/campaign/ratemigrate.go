package campaign

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/units"
)

// rateFlags are the point flags, by test kind, whose value is a rate: what
// a campaign stored under the upper-binary rule may have read as powers
// of 1024. (An rr point's --load has rates too, but a sweep refuses it.)
var rateFlags = map[measure.Kind][]string{
	measure.KindClient: {"bitrate", "bottleneck"},
	measure.KindRR:     {},
}

// KeepStoredRates makes a spec read from a campaign stored under rule
// (archive.RateRule*) send what it sent when it was stored. Under
// archive.RateRuleUpperBinary an upper-case suffix was a power of 1024:
// every rate whose text reads differently now (the bitrate axis's values,
// and -b or --bottleneck among the fixed flags) is rewritten to its exact
// number of bits per second, so that "1G" stays 1073741824. An axis value
// keeps its label as written ("1G"), so its runs keep their IDs and group
// with the runs stored before; only the flag the run is given changes.
// changed says whether any rate was rewritten.
func KeepStoredRates(s *Spec, rule string) (changed bool, err error) {
	switch rule {
	case archive.RateRuleDecimal:
		return false, nil
	case archive.RateRuleUpperBinary:
	default:
		return false, fmt.Errorf("campaign %s: unknown rate rule %q (this wireperf knows %s and %s)",
			s.Name, rule, archive.RateRuleDecimal, archive.RateRuleUpperBinary)
	}
	for i := range s.Axes {
		if axisKinds[s.Axes[i].Name] != kindRate {
			continue
		}
		for j, v := range s.Axes[i].Values {
			exact, rewritten, err := stored(v.Label)
			if err != nil {
				return changed, fmt.Errorf("campaign %s: %s %q: %v", s.Name, s.Axes[i].Name, v.Label, err)
			}
			if !rewritten {
				continue
			}
			old, _ := units.ParseRate(exact)
			s.Axes[i].Values[j] = Value{Label: v.Label, Num: &old, Arg: exact}
			changed = true
		}
	}
	kind := measure.KindClient
	if s.Test == TestRR {
		kind = measure.KindRR
	}
	fixed, fixedChanged, err := storedRateFlags(kind, s.Fixed)
	if err != nil {
		return changed, fmt.Errorf("campaign %s: %v", s.Name, err)
	}
	s.Fixed = fixed
	return changed || fixedChanged, nil
}

// stored rewrites a rate flag's value ("RATE" or "RATE/BURST") read
// under the upper-binary rule to the text that reads the same now.
func stored(text string) (exact string, rewritten bool, err error) {
	rate, burst, hasBurst := strings.Cut(text, "/")
	then, err := units.ParseRateUpperBinary(rate)
	if err != nil {
		return "", false, err
	}
	if now, err := units.ParseRate(rate); err == nil && now == then {
		return text, false, nil
	}
	exact = units.RateString(then)
	if hasBurst {
		exact += "/" + burst
	}
	return exact, true, nil
}

// storedRateFlags rewrites the rate flags among a point's fixed flags, as the
// point's own flag set reads them: "--bitrate=1G", "--bitrate 1G", "-b 1G",
// "-b1G" and "-ub1G" (shorthands run together) all name -b's value.
func storedRateFlags(kind measure.Kind, args []string) ([]string, bool, error) {
	fs := measure.NewFlagSet(string(kind))
	if _, err := measure.New(kind, fs); err != nil {
		return nil, false, err
	}
	isRate := func(f *pflag.Flag) bool {
		for _, name := range rateFlags[kind] {
			if f.Name == name {
				return true
			}
		}
		return false
	}
	out := append([]string{}, args...)
	changed := false
	// rewrite replaces out[i][from:] when f takes a rate.
	rewrite := func(f *pflag.Flag, i, from int) error {
		if !isRate(f) {
			return nil
		}
		exact, rewritten, err := stored(out[i][from:])
		if err != nil {
			return fmt.Errorf("--%s %s: %v", f.Name, out[i][from:], err)
		}
		if rewritten {
			out[i] = out[i][:from] + exact
			changed = true
		}
		return nil
	}
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case a == "--":
			return out, changed, nil // the rest are arguments, not flags
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			f := fs.Lookup(name)
			switch {
			case f == nil:
			case hasValue:
				if err := rewrite(f, i, 2+len(name)+1); err != nil {
					return nil, false, err
				}
			case f.NoOptDefVal == "" && i+1 < len(out): // its value is the next argument
				i++
				if err := rewrite(f, i, 0); err != nil {
					return nil, false, err
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Shorthands run together until the first that takes a
			// value: the rest of the argument, or the next one.
			for j := 1; j < len(a); j++ {
				f := fs.ShorthandLookup(a[j : j+1])
				if f == nil {
					break
				}
				if f.NoOptDefVal != "" {
					continue
				}
				from := j + 1
				if strings.HasPrefix(a[from:], "=") {
					from++
				}
				if from < len(a) {
					if err := rewrite(f, i, from); err != nil {
						return nil, false, err
					}
				} else if i+1 < len(out) {
					i++
					if err := rewrite(f, i, 0); err != nil {
						return nil, false, err
					}
				}
				break
			}
		}
	}
	return out, changed, nil
}
