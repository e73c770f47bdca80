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

// storedRateFlags rewrites the rate flags among a point's fixed flags, as
// the point's own flag set parses them: "--bitrate=1G", "--bitrate 1G",
// "-b 1G", "-b1G" and "-ub1G" (shorthands run together) all give -b the
// value "1G". It walks the flags pflag's parse finds (ParseAll, which
// reads them without setting them) rather than reading the text itself;
// to rewrite a value where it stands, each prefix of args is parsed, and
// a value first read with args[:k] ends args[k-1] (-b1G, --bitrate=1G,
// or the next argument after -b). Every other argument is left as it was
// written: the archive's command lines of an old campaign don't change.
func storedRateFlags(kind measure.Kind, args []string) ([]string, bool, error) {
	type occurrence struct{ flag, value string }
	walk := func(args []string) ([]occurrence, error) {
		fs := measure.NewFlagSet(string(kind))
		if _, err := measure.New(kind, fs); err != nil {
			return nil, err
		}
		// A flag the model doesn't know is the point's own error, told
		// when its test is read; the rates after it are still rewritten.
		fs.ParseErrorsAllowlist.UnknownFlags = true
		var found []occurrence
		err := fs.ParseAll(args, func(f *pflag.Flag, value string) error {
			found = append(found, occurrence{f.Name, value})
			return nil
		})
		return found, err
	}
	if _, err := walk(nil); err != nil {
		return nil, false, err // not a kind of test
	}
	isRate := func(name string) bool {
		for _, r := range rateFlags[kind] {
			if name == r {
				return true
			}
		}
		return false
	}
	out := append([]string{}, args...)
	changed := false
	read := 0 // the occurrences already placed
	for k := 1; k <= len(args); k++ {
		// A prefix that ends with a flag still wanting its value fails
		// after the flags before it are read: those are the ones it has.
		found, _ := walk(args[:k])
		for ; read < len(found); read++ {
			o := found[read]
			if !isRate(o.flag) {
				continue
			}
			exact, rewritten, err := stored(o.value)
			if err != nil {
				return nil, false, fmt.Errorf("--%s %s: %v", o.flag, o.value, err)
			}
			if a := out[k-1]; rewritten && strings.HasSuffix(a, o.value) {
				out[k-1] = a[:len(a)-len(o.value)] + exact
				changed = true
			}
		}
	}
	return out, changed, nil
}
