package spec

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// validatePayload checks --extra-data, --repeating-payload and
// --skip-rx-copy.
func (s Spec) validatePayload() error {
	if len(s.ExtraData) > MaxExtraDataLength {
		return fmt.Errorf("--extra-data: %d bytes, longer than %d", len(s.ExtraData), MaxExtraDataLength)
	}
	if !utf8.ValidString(s.ExtraData) {
		// JSON strings are UTF-8: an encoder would replace the bytes,
		// and the document would not say what was given.
		return errors.New("--extra-data: not UTF-8 text")
	}
	if s.SkipRxCopy {
		switch {
		case s.Protocol != TCP:
			return errors.New("--skip-rx-copy applies to TCP tests (UDP receivers read each datagram's header and stamps)")
		case s.TripTimes:
			return errors.New("--skip-rx-copy and --trip-times: choose one (the receiver reads the stamps in the data it would discard)")
		}
	}
	if s.RepeatingPayload && s.ZeroCopy {
		return errors.New("--repeating-payload and -Z: choose one (-Z sends from a file of zeros)")
	}
	return nil
}

// RepeatingPattern fills b with iperf3's --repeating-payload pattern
// (its fill_with_repeating_pattern, after iperf 2's): the digits '0' to
// '9' over and over, b[i] being the digit of (from+i) mod 10. A sender
// fills its whole block from 0 and a UDP header then overwrites the
// block's start, as iperf3's does; from lets a caller fill the part
// after such a header alone.
func RepeatingPattern(b []byte, from int) {
	d := from % 10
	for i := range b {
		b[i] = byte('0' + d)
		if d++; d == 10 {
			d = 0
		}
	}
}
