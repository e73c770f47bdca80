package campaign

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archivetest"
	"github.com/wireperf/wireperf/internal/units"
)

// oldRuleFile is a campaign as a user stored it when an upper-case rate
// suffix was a power of 1024.
const oldRuleFile = `name: paced
target: h
order: sequential
axes:
  bitrate: [1G, 500m, 2.5M]
flags:
  u: true
  bottleneck: 1G
`

// planUnder plans the file with the bitrate axis read by parse: what
// wireperf planned when it read rates that way.
func planUnder(t *testing.T, parse func(string) (float64, error)) ([]Run, []float64) {
	t.Helper()
	s, err := ParseFile("paced.yaml", []byte(oldRuleFile))
	if err != nil {
		t.Fatal(err)
	}
	var rates []float64
	for i, v := range s.Axes[0].Values {
		r, err := parse(v.Label)
		if err != nil {
			t.Fatal(err)
		}
		s.Axes[0].Values[i].Num = &r
		rates = append(rates, r)
	}
	return s.Plan(), rates
}

// A campaign stored under the old rule, read back from an archive, sends
// the bits per second it sent then, under the run IDs it had then.
func TestKeepStoredRatesFromArchive(t *testing.T) {
	thenRuns, thenRates := planUnder(t, units.ParseRateUpperBinary)
	if thenRates[0] != 1<<30 || thenRates[2] != 2.5*(1<<20) {
		t.Fatalf("the old rule read %v", thenRates)
	}
	for name, dsn := range archivetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			store, err := archive.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if _, err := store.PutCampaign(ctx, archive.Campaign{Name: "paced", Spec: oldRuleFile, SpecFormat: "yaml",
				RateRule: archive.RateRuleUpperBinary}); err != nil {
				t.Fatal(err)
			}
			c, err := store.GetCampaign(ctx, "paced")
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseFile(c.Name+".yaml", []byte(c.Spec))
			if err != nil {
				t.Fatal(err)
			}
			changed, err := KeepStoredRates(s, c.RateRule)
			if err != nil || !changed {
				t.Fatalf("KeepStoredRates(%s) = %v, %v; want the rates rewritten", c.RateRule, changed, err)
			}
			runs := s.Plan()
			if len(runs) != len(thenRuns) {
				t.Fatalf("%d runs; want %d", len(runs), len(thenRuns))
			}
			tests, err := Tests(s, runs)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range runs {
				if r.ID != thenRuns[i].ID || r.Point.Label() != thenRuns[i].Point.Label() {
					t.Errorf("run %d: %s %s; stored as %s %s", i, r.ID, r.Point.Label(), thenRuns[i].ID, thenRuns[i].Point.Label())
				}
				c := tests[r.Point.Key()].Client
				if c.Spec.Rate != thenRates[i] {
					t.Errorf("run %s (%s): sends %v bit/s; sent %v", r.ID, r.Point.Label(), c.Spec.Rate, thenRates[i])
				}
				if c.BottleneckBps != 1<<30 {
					t.Errorf("run %s: --bottleneck %v; was %v", r.ID, c.BottleneckBps, 1<<30)
				}
			}
			if got := Cmdline(s, runs[0].Point); !strings.Contains(got, "--bitrate=1073741824") || !strings.Contains(got, "--bottleneck=1073741824") {
				t.Errorf("Cmdline = %q; want the exact rates it sends", got)
			}
		})
	}
}

// A campaign stored now is planned as it reads: "1G" is 10^9.
func TestKeepStoredRatesDecimalLeavesTheSpec(t *testing.T) {
	nowRuns, _ := planUnder(t, units.ParseRate)
	s, err := ParseFile("paced.yaml", []byte(oldRuleFile))
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := KeepStoredRates(s, archive.RateRuleDecimal); err != nil || changed {
		t.Fatalf("KeepStoredRates(decimal) = %v, %v; want nothing changed", changed, err)
	}
	if runs := s.Plan(); !reflect.DeepEqual(runs, nowRuns) {
		t.Errorf("plan changed under the decimal rule")
	}
	if _, err := KeepStoredRates(s, "metric"); err == nil || !strings.Contains(err.Error(), `unknown rate rule "metric"`) {
		t.Errorf("an unknown rule: %v", err)
	}
}

func TestKeepStoredRatesFixedFlags(t *testing.T) {
	for _, c := range []struct {
		in, want []string
		changed  bool
	}{
		{[]string{"-u", "-b", "1G"}, []string{"-u", "-b", "1073741824"}, true},
		{[]string{"-b1G/32"}, []string{"-b1073741824/32"}, true},
		{[]string{"-b=2M"}, []string{"-b=2097152"}, true},
		{[]string{"-ub1G"}, []string{"-ub1073741824"}, true},
		{[]string{"--bitrate", "1T", "--bottleneck=10G"}, []string{"--bitrate", "1099511627776", "--bottleneck=10737418240"}, true},
		{[]string{"-w", "1G", "-l1M", "--window=2G"}, []string{"-w", "1G", "-l1M", "--window=2G"}, false}, // sizes
		{[]string{"-b", "100m", "--bottleneck=1g", "-b", "1000"}, []string{"-b", "100m", "--bottleneck=1g", "-b", "1000"}, false},
		{[]string{"-ub", "1G"}, []string{"-ub", "1073741824"}, true},
		{[]string{"-t", "10", "--", "-b", "1G"}, []string{"-t", "10", "--", "-b", "1G"}, false},
		// As the text walk of before rewrote them: only rate flags' values,
		// wherever the parse finds them, every other argument as written.
		{[]string{"-ub=1G"}, []string{"-ub=1073741824"}, true},
		{[]string{"-P", "2", "-b", "1G", "-C", "1G", "-T", "1G", "--bottleneck", "1T"}, []string{"-P", "2", "-b", "1073741824", "-C", "1G", "-T", "1G", "--bottleneck", "1099511627776"}, true},
		{[]string{"--foo=1", "-b", "1G"}, []string{"--foo=1", "-b", "1073741824"}, true},
		{[]string{"-b", "1G", "-b", "2M"}, []string{"-b", "1073741824", "-b", "2097152"}, true},
		{[]string{"-t", "1", "-b", "500M", "-i", "1"}, []string{"-t", "1", "-b", "524288k", "-i", "1"}, true},
		{[]string{"-b"}, []string{"-b"}, false},
	} {
		s := &Spec{Name: "c", Fixed: append([]string{}, c.in...)}
		changed, err := KeepStoredRates(s, archive.RateRuleUpperBinary)
		if err != nil || changed != c.changed || !reflect.DeepEqual(s.Fixed, c.want) {
			t.Errorf("KeepStoredRates(%q) = %q, %v, %v; want %q, %v", c.in, s.Fixed, changed, err, c.want, c.changed)
		}
	}
	s := &Spec{Name: "c", Fixed: []string{"-b", "1x"}}
	if _, err := KeepStoredRates(s, archive.RateRuleUpperBinary); err == nil || !strings.Contains(err.Error(), `invalid rate "1x"`) {
		t.Errorf("a bad stored rate: %v", err)
	}
}
