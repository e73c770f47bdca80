package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

// Flag values that parse our units, so a bad value fails while flags are
// parsed, with the flag's name in the message.

// Each value's String is the text its Set reads back to the same value
// (help shows it as the default), and get returns the value itself, for
// the test that checks every default in the help.

type sizeValue struct{ p *int64 }

func (v sizeValue) String() string {
	if v.p == nil {
		return "0"
	}
	return units.SizeString(*v.p)
}
func (v sizeValue) get() any { return *v.p }
func (v sizeValue) Set(s string) error {
	n, err := units.ParseSize(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}
func (sizeValue) Type() string { return "size" }

type durationValue struct{ p *time.Duration }

func (v durationValue) String() string {
	if v.p == nil {
		return "0"
	}
	return units.DurationString(*v.p)
}
func (v durationValue) get() any { return *v.p }
func (v durationValue) Set(s string) error {
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}
func (durationValue) Type() string { return "duration" }

// rateValue is a rate in bit/s: "1g" is 10^9, "1G" 2^30.
type rateValue struct{ p *float64 }

func (v rateValue) String() string {
	if v.p == nil {
		return "0"
	}
	return units.RateString(*v.p)
}
func (v rateValue) get() any { return *v.p }
func (v rateValue) Set(s string) error {
	r, err := units.ParseRate(s)
	if err != nil {
		return err
	}
	*v.p = r
	return nil
}
func (rateValue) Type() string { return "rate" }

type formatValue struct{ p *units.Format }

func (v formatValue) String() string { return v.p.String() }
func (v formatValue) get() any       { return *v.p }
func (v formatValue) Set(s string) error {
	f, err := units.ParseFormat(s)
	if err != nil {
		return err
	}
	*v.p = f
	return nil
}
func (formatValue) Type() string { return "unit" }

// tosValue takes a TOS byte in decimal, hex (0x10) or octal (020), as
// iperf3 does.
type tosValue struct{ p *int }

func (v tosValue) String() string { return strconv.Itoa(*v.p) }
func (v tosValue) get() any       { return *v.p }
func (v tosValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil || n < 0 || n > 255 {
		return fmt.Errorf("invalid TOS %q: want 0 to 255 (decimal, 0x hex or 0 octal)", s)
	}
	*v.p = int(n)
	return nil
}
func (tosValue) Type() string { return "tos" }

// dscpNames are the standard code points (RFC 2474, 2597, 3246, 5865, 8622).
var dscpNames = map[string]int{
	"cs0": 0, "cs1": 8, "cs2": 16, "cs3": 24, "cs4": 32, "cs5": 40, "cs6": 48, "cs7": 56,
	"af11": 10, "af12": 12, "af13": 14, "af21": 18, "af22": 20, "af23": 22,
	"af31": 26, "af32": 28, "af33": 30, "af41": 34, "af42": 36, "af43": 38,
	"ef": 46, "va": 44, "le": 1,
}

// dscpValue sets the TOS byte from a DSCP name or number; the ECN bits stay 0.
type dscpValue struct{ tos *int }

func (v dscpValue) String() string { return strconv.Itoa(*v.tos >> 2) }
func (v dscpValue) get() any       { return *v.tos >> 2 }
func (v dscpValue) Set(s string) error {
	if n, ok := dscpNames[strings.ToLower(s)]; ok {
		*v.tos = n << 2
		return nil
	}
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil || n < 0 || n > 63 {
		return fmt.Errorf("invalid DSCP %q: want 0 to 63 or a name such as EF, AF41, CS1", s)
	}
	*v.tos = int(n) << 2
	return nil
}
func (dscpValue) Type() string { return "dscp" }
