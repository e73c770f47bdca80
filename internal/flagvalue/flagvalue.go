// Package flagvalue holds command-line flag values that parse wireperf's
// units (sizes, durations, rates, unit formats, TOS and DSCP), so a bad
// value fails while flags are parsed, with the flag's name in the message.
package flagvalue

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// Each value's String is the text its Set reads back to the same value
// (help shows it as the default), and Get returns the value itself, for
// the test that checks every default in the help.

// SizeValue is a byte count: "16M" is 16 MiB.
type SizeValue struct{ P *int64 }

func (v SizeValue) String() string {
	if v.P == nil {
		return "0"
	}
	return units.SizeString(*v.P)
}
func (v SizeValue) Get() any { return *v.P }
func (v SizeValue) Set(s string) error {
	n, err := units.ParseSize(s)
	if err != nil {
		return err
	}
	*v.P = n
	return nil
}
func (SizeValue) Type() string { return "size" }

// Size is a SizeValue over p.
func Size(p *int64) SizeValue { return SizeValue{P: p} }

// DurationValue is seconds (fractions allowed) or a Go duration such as 90s.
type DurationValue struct{ P *time.Duration }

func (v DurationValue) String() string {
	if v.P == nil {
		return "0"
	}
	return units.DurationString(*v.P)
}
func (v DurationValue) Get() any { return *v.P }
func (v DurationValue) Set(s string) error {
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.P = d
	return nil
}
func (DurationValue) Type() string { return "duration" }

// Duration is a DurationValue over p.
func Duration(p *time.Duration) DurationValue { return DurationValue{P: p} }

// RateValue is a rate in bit/s: "1g" and "1G" are both 10^9, as iperf3
// reads -b.
type RateValue struct{ P *float64 }

func (v RateValue) String() string {
	if v.P == nil {
		return "0"
	}
	return units.RateString(*v.P)
}
func (v RateValue) Get() any { return *v.P }
func (v RateValue) Set(s string) error {
	r, err := units.ParseRate(s)
	if err != nil {
		return err
	}
	*v.P = r
	return nil
}
func (RateValue) Type() string { return "rate" }

// Rate is a RateValue over p.
func Rate(p *float64) RateValue { return RateValue{P: p} }

// FormatValue is a unit letter: a adaptive, b k m g t bits, B K M G T bytes.
type FormatValue struct{ P *units.Format }

func (v FormatValue) String() string { return v.P.String() }
func (v FormatValue) Get() any       { return *v.P }
func (v FormatValue) Set(s string) error {
	f, err := units.ParseFormat(s)
	if err != nil {
		return err
	}
	*v.P = f
	return nil
}
func (FormatValue) Type() string { return "unit" }

// Format is a FormatValue over p.
func Format(p *units.Format) FormatValue { return FormatValue{P: p} }

// TOSValue takes a TOS byte in decimal, hex (0x10) or octal (020), as
// iperf3 does.
type TOSValue struct{ P *int }

func (v TOSValue) String() string { return strconv.Itoa(*v.P) }
func (v TOSValue) Get() any       { return *v.P }
func (v TOSValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil || n < 0 || n > 255 {
		return fmt.Errorf("invalid TOS %q: want 0 to 255 (decimal, 0x hex or 0 octal)", s)
	}
	*v.P = int(n)
	return nil
}
func (TOSValue) Type() string { return "tos" }

// TOS is a TOSValue over p.
func TOS(p *int) TOSValue { return TOSValue{P: p} }

// dscpNames are the standard code points (RFC 2474, 2597, 3246, 5865, 8622).
var dscpNames = map[string]int{
	"cs0": 0, "cs1": 8, "cs2": 16, "cs3": 24, "cs4": 32, "cs5": 40, "cs6": 48, "cs7": 56,
	"af11": 10, "af12": 12, "af13": 14, "af21": 18, "af22": 20, "af23": 22,
	"af31": 26, "af32": 28, "af33": 30, "af41": 34, "af42": 36, "af43": 38,
	"ef": 46, "va": 44, "le": 1,
}

// DSCPValue sets the TOS byte from a DSCP name or number; the ECN bits stay 0.
type DSCPValue struct{ TOS *int }

func (v DSCPValue) String() string { return strconv.Itoa(*v.TOS >> 2) }
func (v DSCPValue) Get() any       { return *v.TOS >> 2 }
func (v DSCPValue) Set(s string) error {
	if n, ok := dscpNames[strings.ToLower(s)]; ok {
		*v.TOS = n << 2
		return nil
	}
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil || n < 0 || n > 63 {
		return fmt.Errorf("invalid DSCP %q: want 0 to 63 or a name such as EF, AF41, CS1", s)
	}
	*v.TOS = int(n) << 2
	return nil
}
func (DSCPValue) Type() string { return "dscp" }

// DSCP is a DSCPValue over p.
func DSCP(p *int) DSCPValue { return DSCPValue{TOS: p} }
