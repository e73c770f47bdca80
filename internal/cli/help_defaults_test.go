package cli

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/units"
)

// typedValue is a flag value of ours: get returns what the flag holds.
type typedValue interface {
	pflag.Value
	Get() any
}

// TestHelpDefaultsAreTheRealDefaults walks every flag of every command
// and checks that the default the help shows is the value the command
// uses when the flag is not given: read back through the flag's own
// parser, the text must give exactly the value the flag holds.
func TestHelpDefaultsAreTheRealDefaults(t *testing.T) {
	root := newRoot(env{stdout: io.Discard, stderr: io.Discard})
	flags := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			flags++
			name := c.CommandPath() + " --" + f.Name
			tv, ours := f.Value.(typedValue)
			if _, slice := f.Value.(pflag.SliceValue); slice && !ours {
				// Set would append to a slice: its printed form is the check.
				if f.DefValue != f.Value.String() {
					t.Errorf("%s: help says default %q, the flag holds %q", name, f.DefValue, f.Value.String())
				}
				return
			}
			if !ours {
				// pflag's own values print exactly (strconv); a round trip
				// through Set proves the text is the value.
				before := f.Value.String()
				if err := f.Value.Set(f.DefValue); err != nil && f.DefValue != "" && f.DefValue != "[]" {
					t.Errorf("%s: default %q does not parse: %v", name, f.DefValue, err)
				} else if err == nil && f.Value.String() != before {
					t.Errorf("%s: help says default %q, the flag holds %q", name, f.DefValue, before)
				}
				return
			}
			real := tv.Get()
			switch f.DefValue {
			case "", "0", "false", "<nil>": // help shows no default: it must be the zero value
				if !reflect.ValueOf(&real).Elem().IsZero() && !isZero(real) {
					t.Errorf("%s: help shows no default, the flag holds %v", name, real)
				}
				return
			}
			if err := f.Value.Set(f.DefValue); err != nil {
				t.Errorf("%s: help's default %q does not parse: %v", name, f.DefValue, err)
				return
			}
			if got := tv.Get(); !reflect.DeepEqual(got, real) {
				t.Errorf("%s: help says (default %s), which is %v; the command uses %v", name, f.DefValue, got, real)
			}
			// Sizes and durations read as a person would type them.
			switch v := real.(type) {
			case int64:
				if f.Value.Type() == "size" && f.DefValue != units.SizeString(v) {
					t.Errorf("%s: default shown as %q, want %q", name, f.DefValue, units.SizeString(v))
				}
			case time.Duration:
				if f.DefValue != units.DurationString(v) {
					t.Errorf("%s: default shown as %q, want %q", name, f.DefValue, units.DurationString(v))
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if flags < 100 {
		t.Fatalf("walked %d flags; the command tree should have well over 100", flags)
	}
}

func isZero(v any) bool {
	return v == nil || reflect.ValueOf(v).IsZero()
}

// TestHelpShowsDefaults pins the defaults the issue found misprinted.
func TestHelpShowsDefaults(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"client", "--help"}, []string{"(default 10s)", "give up connecting after this long (seconds, or e.g. 500ms) (default 10s)"}},
		{[]string{"server", "--help"}, []string{"(default 544M)", "(default 100ms)", "e.g. 1h (0: no limit) (default 24h)"}},
		{[]string{"rr", "--help"}, []string{"how long the load runs (default 10s)"}},
	}
	for _, tc := range tests {
		code, out, errb := runCLI(tc.args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d: %s", tc.args, code, errb)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: help lacks %q:\n%s", tc.args, w, out)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, " duration ") && strings.HasSuffix(line, "(default 1)") {
				t.Errorf("%q: a duration's default cut short: %q", tc.args, line)
			}
		}
		for _, bad := range []string{"24h0m", "536870912"} {
			if strings.Contains(out, bad) {
				t.Errorf("%q: help shows %q", tc.args, bad)
			}
		}
	}
}

// TestHelpStatesEachDefaultOnce checks that no flag's text repeats the
// default cobra prints after it ("(10s) (default 10s)"): a hand-written
// copy is the one that goes stale.
func TestHelpStatesEachDefaultOnce(t *testing.T) {
	root := newRoot(env{stdout: io.Discard, stderr: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			d := strings.Trim(f.DefValue, `"`)
			switch d {
			case "", "0", "false", "[]":
				return
			}
			if strings.Contains(f.Usage, "("+d+")") || strings.Contains(f.Usage, "("+d+";") {
				t.Errorf("%s --%s: the text states the default %s by hand as well: %q", c.CommandPath(), f.Name, d, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
