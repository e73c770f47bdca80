package testline

import "github.com/wireperf/wireperf/internal/measure/testflags"

// The measurement flags a scheduled test may carry, per command, and why
// the others are refused, are declared once in package testflags. A flag
// not declared there is refused.

// FlagSpec is how an allowed flag is written.
type FlagSpec struct {
	Short string // its shorthand, "" when none
	Bool  bool   // takes no value
}

// Allowed is a command's allowed flags by long name (nil for a command a
// test line can't name). The commands' flag sets are made from the same
// declarations.
func Allowed(command string) map[string]FlagSpec {
	t := testflags.Of(command)
	if t == nil {
		return nil
	}
	out := make(map[string]FlagSpec, len(t))
	for _, f := range t {
		out[f.Name] = FlagSpec{Short: f.Short, Bool: f.Kind == testflags.Bool}
	}
	return out
}

// Refused is why a flag is refused in every test line, by long name.
func Refused(name string) (string, bool) { return testflags.Refused(name) }
