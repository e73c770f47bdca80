package group

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/measure/testflags"
)

// The group's test flags and a group file's keys are the ones testflags
// declares a group's, under the client's names and shorthands.
func TestGroupFlagsAreDeclared(t *testing.T) {
	fs := pflag.NewFlagSet("group", pflag.ContinueOnError)
	NewFlags().Register(fs)
	var declared []string
	for _, d := range testflags.Group() {
		declared = append(declared, d.Name)
		f := fs.Lookup(d.Name)
		if f == nil {
			t.Errorf("--%s: declared a group flag, not registered", d.Name)
			continue
		}
		if f.Shorthand != d.Short {
			t.Errorf("--%s: shorthand %q, declared %q", d.Name, f.Shorthand, d.Short)
		}
		if isBool := f.NoOptDefVal == "true"; isBool != (d.Kind == testflags.Bool) {
			t.Errorf("--%s: takes a value %v, declared kind %v", d.Name, !isBool, d.Kind)
		}
	}
	var keys []string
	ft := reflect.TypeOf(FileOptions{})
	for i := range ft.NumField() {
		keys = append(keys, strings.Split(ft.Field(i).Tag.Get("yaml"), ",")[0])
	}
	slices.Sort(keys)
	slices.Sort(declared)
	if !slices.Equal(keys, declared) {
		t.Errorf("a group file's keys %v, declared group flags %v", keys, declared)
	}
}
