package spec

import (
	"strings"
	"testing"
	"time"
)

func TestRRValidate(t *testing.T) {
	ok := Spec{Protocol: RR, Streams: 1, RRMode: RRUDP, RRSizes: "64,1472", Duration: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mut  func(*Spec)
		want string
	}{
		{func(s *Spec) { s.RRMode = "sctp" }, "rr mode"},
		{func(s *Spec) { s.RRSizes = "" }, "--sizes"},
		{func(s *Spec) { s.RRSizes = "64,x" }, "--sizes"},
		{func(s *Spec) { s.RRSizes = "47" }, "--sizes"},
		{func(s *Spec) { s.RRSizes = "70000" }, "--sizes"},
		{func(s *Spec) { s.RRResponse = 10 }, "--response-size"},
		{func(s *Spec) { s.Duration = 0 }, "-t or --count"},
		{func(s *Spec) { s.Streams = 2 }, "one stream"},
		{func(s *Spec) { s.Reverse = true }, "-R"},
		{func(s *Spec) { s.RRInterval = time.Minute }, "--interval"},
	} {
		s := ok
		tc.mut(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error mentioning %q", s, err, tc.want)
		}
	}
	tcp := ok
	tcp.RRMode, tcp.RRSizes = RRTCP, FormatRRSizes(1<<20)
	if err := tcp.Validate(); err != nil {
		t.Errorf("a 1 MiB TCP request: %v", err)
	}
	if n := (Spec{RRSizes: "64,512", Duration: 2 * time.Second}).RRTotal(); n != 4*time.Second {
		t.Errorf("RRTotal %v", n)
	}
	if q, r := (Spec{RRSizes: "64, 512", RRResponse: 100}).RRLargest(); q != 512 || r != 100 {
		t.Errorf("RRLargest %d %d", q, r)
	}
}
