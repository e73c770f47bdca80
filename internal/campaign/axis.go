// Package campaign plans and runs a sweep of tests: the cross-product of
// axes (any client flag), repeated, in a shuffled order whose key is
// recorded, with deterministic run IDs so that an interrupted campaign
// resumes with only what is missing. It holds no I/O: the caller runs and
// stores each test.
package campaign

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/wireperf/wireperf/internal/measure/testflags"
	"github.com/wireperf/wireperf/internal/units"
)

// Axis names: the client's long flags (testflags declares which), and
// direction and proto.
const (
	AxisWindow     = "window"
	AxisParallel   = "parallel"
	AxisTime       = "time"
	AxisLength     = "length"
	AxisBitrate    = "bitrate"
	AxisSpacing    = "spacing"
	AxisCongestion = "congestion"
	AxisSetMSS     = "set-mss"
	AxisDirection  = "direction"
	AxisProto      = "proto"
)

// kind is how an axis's values parse.
type kind int

const (
	kindSize     kind = iota // bytes: 64K, 1M
	kindCount                // a whole number
	kindDuration             // seconds: 10, 10s, 20us
	kindRate                 // bits per second: 100m, 1g
	kindWord                 // a name, no number
)

// axisKinds are the axes and how their values parse: the client's flags
// testflags declares a campaign's axes, and direction and proto, which
// are the campaign's own.
var axisKinds = axesOf(testflags.Axes())

// aliases are the client's short flags for the same axes.
var aliases = aliasesOf(testflags.Axes())

func axesOf(flags []testflags.Flag) map[string]kind {
	out := map[string]kind{AxisDirection: kindWord, AxisProto: kindWord}
	for _, f := range flags {
		switch f.Kind {
		case testflags.Size:
			out[f.Name] = kindSize
		case testflags.Int:
			out[f.Name] = kindCount
		case testflags.Duration:
			out[f.Name] = kindDuration
		case testflags.Rate:
			out[f.Name] = kindRate
		default:
			out[f.Name] = kindWord
		}
	}
	return out
}

func aliasesOf(flags []testflags.Flag) map[string]string {
	out := map[string]string{}
	for _, f := range flags {
		if f.Short != "" {
			out[f.Short] = f.Name
		}
	}
	return out
}

// AxisNames lists the axes a campaign may sweep, sorted.
func AxisNames() []string {
	out := make([]string, 0, len(axisKinds))
	for n := range axisKinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CanonicalAxis returns the axis's name for a long or short flag name.
func CanonicalAxis(name string) (string, bool) {
	if a, ok := aliases[name]; ok {
		return a, true
	}
	_, ok := axisKinds[name]
	return name, ok
}

// Value is one value of an axis: as the user wrote it, and as a number in
// base units (bytes, bits per second, seconds) where the axis has one.
type Value struct {
	Label string
	Num   *float64
	// Arg, when set, is the flag's value a run is given instead of
	// Label: a rate of a campaign stored when "1G" meant 2^30 keeps its
	// label and is sent as its exact number (KeepStoredRates).
	Arg string
}

// Key is the value in a canonical form: the base-unit number, or the word.
func (v Value) Key() string {
	if v.Num != nil {
		return strconv.FormatFloat(*v.Num, 'f', -1, 64)
	}
	return v.Label
}

// ParseValue parses one value of the named axis.
func ParseValue(axis, s string) (Value, error) {
	s = strings.TrimSpace(s)
	k, ok := axisKinds[axis]
	if !ok {
		return Value{}, fmt.Errorf("unknown axis %q (axes: %s)", axis, strings.Join(AxisNames(), ", "))
	}
	if s == "" {
		return Value{}, fmt.Errorf("%s: empty value", axis)
	}
	num := func(f float64) (Value, error) { return Value{Label: s, Num: &f}, nil }
	switch k {
	case kindSize:
		n, err := units.ParseSize(s)
		if err != nil || n <= 0 {
			return Value{}, fmt.Errorf("%s %q: want a positive size such as 64K or 16M", axis, s)
		}
		return num(float64(n))
	case kindCount:
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return Value{}, fmt.Errorf("%s %q: want a positive whole number", axis, s)
		}
		return num(float64(n))
	case kindDuration:
		d, err := units.ParseDuration(s)
		if err != nil || d < 0 || (axis == AxisTime && d == 0) {
			return Value{}, fmt.Errorf("%s %q: want a duration such as 10s or 20us", axis, s)
		}
		return num(d.Seconds())
	case kindRate:
		r, err := units.ParseRate(s)
		if err != nil || r < 0 {
			return Value{}, fmt.Errorf("%s %q: want a rate such as 100m or 1g", axis, s)
		}
		return num(r)
	}
	switch axis {
	case AxisDirection:
		if s != "up" && s != "down" && s != "bidir" {
			return Value{}, fmt.Errorf("direction %q: want up, down or bidir", s)
		}
	case AxisProto:
		if s != "tcp" && s != "udp" {
			return Value{}, fmt.Errorf("proto %q: want tcp or udp", s)
		}
	case AxisCongestion:
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return Value{}, fmt.Errorf("congestion %q: want an algorithm name such as cubic or bbr", s)
			}
		}
	}
	return Value{Label: s}, nil
}

// ParseList parses a comma list of values of the named axis.
func ParseList(axis, list string) ([]Value, error) {
	var out []Value
	for _, s := range strings.Split(list, ",") {
		v, err := ParseValue(axis, s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Args are the client flags that set this axis to v.
func Args(axis string, v Value) []string {
	switch axis {
	case AxisDirection:
		switch v.Label {
		case "down":
			return []string{"--reverse"}
		case "bidir":
			return []string{"--bidir"}
		}
		return nil
	case AxisProto:
		if v.Label == "udp" {
			return []string{"--udp"}
		}
		return nil
	}
	if v.Arg != "" {
		return []string{"--" + axis + "=" + v.Arg}
	}
	return []string{"--" + axis + "=" + v.Label}
}
