package spec

import (
	"strings"
	"testing"
)

func TestRepeatingPattern(t *testing.T) {
	b := make([]byte, 25)
	RepeatingPattern(b, 0)
	if got, want := string(b), "0123456789012345678901234"; got != want {
		t.Errorf("from 0: %q; want %q", got, want)
	}
	// After a 16-byte header the body goes on where the pattern was.
	RepeatingPattern(b[16:], 16)
	if got, want := string(b[16:]), "678901234"; got != want {
		t.Errorf("from 16: %q; want %q", got, want)
	}
	RepeatingPattern(nil, 3) // nothing to fill, no panic
}

func TestValidatePayload(t *testing.T) {
	tcp := Default()
	udp := Default()
	udp.Protocol, udp.Length, udp.Rate = UDP, DefaultUDPLength, 1e6
	tests := []struct {
		name string
		s    Spec
		set  func(*Spec)
		want string // "" for valid
	}{
		{"extra data", tcp, func(s *Spec) { s.ExtraData = "quote\" nl\n nul\x00" }, ""},
		{"extra data at the limit", tcp, func(s *Spec) { s.ExtraData = strings.Repeat("x", MaxExtraDataLength) }, ""},
		{"extra data over the limit", tcp, func(s *Spec) { s.ExtraData = strings.Repeat("x", MaxExtraDataLength+1) }, "--extra-data: 4097 bytes, longer than 4096"},
		{"extra data not UTF-8", tcp, func(s *Spec) { s.ExtraData = "\xff\xfe" }, "--extra-data: not UTF-8 text"},
		{"skip rx copy TCP", tcp, func(s *Spec) { s.SkipRxCopy = true }, ""},
		{"skip rx copy UDP", udp, func(s *Spec) { s.SkipRxCopy = true }, "--skip-rx-copy applies to TCP tests"},
		{"skip rx copy trip times", tcp, func(s *Spec) { s.SkipRxCopy, s.TripTimes = true, true }, "--skip-rx-copy and --trip-times"},
		{"repeating TCP", tcp, func(s *Spec) { s.RepeatingPayload = true }, ""},
		{"repeating UDP", udp, func(s *Spec) { s.RepeatingPayload = true }, ""},
		{"repeating zero copy", tcp, func(s *Spec) { s.RepeatingPayload, s.ZeroCopy = true, true }, "--repeating-payload and -Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			tt.set(&s)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v; want %q", err, tt.want)
			}
		})
	}
}
