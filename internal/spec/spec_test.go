package spec

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/isoch"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Spec)
		want string // substring of the error; "" for valid
	}{
		{"default", func(*Spec) {}, ""},
		{"bytes only", func(s *Spec) { s.Duration = 0; s.Bytes = 1 << 20 }, ""},
		{"neither time nor bytes", func(s *Spec) { s.Duration = 0 }, "-t 0 needs -n"},
		{"zero streams", func(s *Spec) { s.Streams = 0 }, "-P 0"},
		{"too many streams", func(s *Spec) { s.Streams = MaxStreams + 1 }, "-P"},
		{"negative time", func(s *Spec) { s.Duration = -time.Second }, "-t"},
		{"interval too short", func(s *Spec) { s.Interval = time.Millisecond }, "-i"},
		{"interval off", func(s *Spec) { s.Interval = 0 }, ""},
		{"omit longer than test", func(s *Spec) { s.Omit = 20 * time.Second }, "-O"},
		{"reverse and bidir", func(s *Spec) { s.Reverse, s.Bidir = true, true }, "choose one"},
		{"window too big", func(s *Spec) { s.Window = 1 << 32 }, "-w"},
		{"zero length", func(s *Spec) { s.Length = 0 }, "-l 0"},
		{"tiny mss", func(s *Spec) { s.MSS = 10 }, "-M 10"},
		{"congestion with a slash", func(s *Spec) { s.Congestion = "../x" }, "-C"},
		{"tos too big", func(s *Spec) { s.TOS = 256 }, "--tos"},
		{"unknown protocol", func(s *Spec) { s.Protocol = "sctp" }, "protocol"},
		{"udp", func(s *Spec) { s.Protocol = UDP; s.Length = DefaultUDPLength; s.Rate = 1e9 }, ""},
		{"udp rate and spacing", func(s *Spec) { s.Protocol = UDP; s.Length = 1000; s.Rate = 1e6; s.Spacing = 10 }, "choose one"},
		{"udp length", func(s *Spec) { s.Protocol = UDP; s.Length = 70000 }, "-l 70000"},
		{"udp burst without rate", func(s *Spec) { s.Protocol = UDP; s.Length = 1000; s.Burst = 4 }, "burst"},
		{"isochronous", func(s *Spec) { s.Protocol = UDP; s.Length = 1000; s.Isochronous = &isoch.Frames{FPS: 60, Mean: 20e6} }, ""},
		{"isochronous tcp", func(s *Spec) { s.Isochronous = &isoch.Frames{FPS: 60, Mean: 20e6} }, "--isochronous applies to UDP"},
		{"isochronous and a rate", func(s *Spec) {
			s.Protocol, s.Length, s.Rate, s.Isochronous = UDP, 1000, 1e6, &isoch.Frames{FPS: 60, Mean: 20e6}
		}, "choose one"},
		{"isochronous short datagrams", func(s *Spec) { s.Protocol, s.Length, s.Isochronous = UDP, 63, &isoch.Frames{FPS: 60, Mean: 20e6} }, "-l 63"},
		{"isochronous from the network", func(s *Spec) { s.Protocol, s.Length, s.Isochronous = UDP, 1000, &isoch.Frames{FPS: 1e9, Mean: 20e6} }, "--isochronous: 1e+09 frames a second"},
		{"long title", func(s *Spec) { s.Title = strings.Repeat("x", MaxTitleLength+1) }, "-T"},
		{"title with a carriage return", func(s *Spec) { s.Title = "x\r[t9 6.6.6.6:1] forged" }, `-T "x\r[t9 6.6.6.6:1] forged": a title may not hold control characters`},
		{"title with a newline", func(s *Spec) { s.Title = "x\ny" }, "may not hold control characters"},
		{"title with an escape sequence", func(s *Spec) { s.Title = "x\x1b[2J" }, "may not hold control characters"},
		{"title with a C1 control", func(s *Spec) { s.Title = "x\u009b2J" }, "may not hold control characters"},
		{"title with a NUL", func(s *Spec) { s.Title = "x\x00" }, "may not hold control characters"},
		{"title not UTF-8", func(s *Spec) { s.Title = "x\xff" }, "not UTF-8"},
		{"title with a tab and accents", func(s *Spec) { s.Title = "café\tnord" }, ""},
		{"tcpinfo interval too short", func(s *Spec) { s.TCPInfoInterval = time.Microsecond }, "--tcpinfo-interval"},
		{"tcpinfo off", func(s *Spec) { s.TCPInfoInterval = -1 }, ""},
		{"trip times", func(s *Spec) { s.TripTimes = true; s.Length = MinTripTimesLength }, ""},
		{"trip times in UDP", func(s *Spec) { s.TripTimes = true; s.Protocol = UDP; s.Length = 1000 }, "--trip-times applies to TCP"},
		{"trip times with -Z", func(s *Spec) { s.TripTimes, s.ZeroCopy = true, true }, "--trip-times and -Z"},
		{"a TOS per stream", func(s *Spec) { s.Streams, s.Bidir, s.StreamTOS = 4, true, []int{0x00, 0x20, 0xa0, 0xb8} }, ""},
		{"a TOS per stream, one short", func(s *Spec) { s.Streams, s.StreamTOS = 4, []int{0, 0x20, 0xa0} }, "3 given for -P 4"},
		{"a TOS per stream, one over", func(s *Spec) { s.StreamTOS = []int{0, 0x20} }, "2 given for -P 1"},
		{"a TOS per stream, empty", func(s *Spec) { s.StreamTOS = []int{} }, "0 given for -P 1"},
		{"a TOS per stream over a byte", func(s *Spec) { s.Streams, s.StreamTOS = 2, []int{0x20, 256} }, "the TOS of stream 2: 256"},
		{"a TOS per stream, negative", func(s *Spec) { s.StreamTOS = []int{-1} }, "the TOS of stream 1: -1"},
		{"a TOS per stream and --tos", func(s *Spec) { s.TOS, s.StreamTOS = 0x20, []int{0xb8} }, "--tos and a TOS per stream"},
		{"a TOS per stream in UDP", func(s *Spec) { s.Protocol = UDP; s.Length = 1000; s.StreamTOS = []int{0xb8} }, "applies to TCP"},
		{"a TOS per stream in rr", func(s *Spec) {
			*s = Spec{Protocol: RR, Streams: 1, RRMode: RRUDP, Duration: time.Second, StreamTOS: []int{0xb8}}
		}, "applies to TCP"},
		{"trip times, block under its header", func(s *Spec) { s.TripTimes = true; s.Length = MinTripTimesLength - 1 }, "-l 15: --trip-times"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Default()
			tc.mod(&s)
			err := s.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// TestTOSOn: with --bidir stream i and P+i carry the same class, so each
// class runs once each way; without a TOS per stream every stream has
// --tos.
func TestTOSOn(t *testing.T) {
	s := Default()
	s.Streams, s.Bidir, s.StreamTOS = 4, true, []int{0x00, 0x20, 0xa0, 0xb8}
	want := []int{0x00, 0x20, 0xa0, 0xb8, 0x00, 0x20, 0xa0, 0xb8}
	for id := 1; id <= s.DataConns(); id++ {
		if got := s.TOSOn(id); got != want[id-1] {
			t.Errorf("stream %d: TOS %#x, want %#x", id, got, want[id-1])
		}
	}
	s.StreamTOS, s.TOS = nil, 0x10
	for id := 1; id <= s.DataConns(); id++ {
		if got := s.TOSOn(id); got != 0x10 {
			t.Errorf("without a TOS per stream, stream %d: TOS %#x, want --tos's 0x10", id, got)
		}
	}
	// A spec that failed Validate (a peer's) must still not panic.
	s.StreamTOS = []int{0x20}
	if got := s.TOSOn(4); got != 0x20 {
		t.Errorf("a short list: TOS %#x, want its only 0x20", got)
	}
}

func TestDirections(t *testing.T) {
	s := Default()
	s.Streams = 3
	if !s.ClientSends() || s.ServerSends() || s.DataConns() != 3 {
		t.Errorf("forward: %v %v %d", s.ClientSends(), s.ServerSends(), s.DataConns())
	}
	s.Reverse = true
	if s.ClientSends() || !s.ServerSends() || s.DataConns() != 3 {
		t.Errorf("reverse: %v %v %d", s.ClientSends(), s.ServerSends(), s.DataConns())
	}
	s.Reverse, s.Bidir = false, true
	if !s.ClientSends() || !s.ServerSends() || s.DataConns() != 6 {
		t.Errorf("bidir: %v %v %d", s.ClientSends(), s.ServerSends(), s.DataConns())
	}
}

func TestClientSendsOn(t *testing.T) {
	s := Default()
	s.Streams = 2
	tests := []struct {
		reverse, bidir bool
		want           []bool // streams 1..DataConns
	}{
		{false, false, []bool{true, true}},
		{true, false, []bool{false, false}},
		{false, true, []bool{true, true, false, false}},
	}
	for _, tc := range tests {
		s.Reverse, s.Bidir = tc.reverse, tc.bidir
		for i, want := range tc.want {
			if got := s.ClientSendsOn(i + 1); got != want {
				t.Errorf("reverse=%v bidir=%v stream %d: %v, want %v", tc.reverse, tc.bidir, i+1, got, want)
			}
		}
	}
}

func TestTimelinePeriod(t *testing.T) {
	for _, tc := range []struct {
		interval, want time.Duration
	}{
		{0, DefaultTCPInfoInterval}, // a spec that says nothing, e.g. from an older client
		{-1, 0},
		{20 * time.Millisecond, 20 * time.Millisecond},
	} {
		if got := (Spec{TCPInfoInterval: tc.interval}).TimelinePeriod(); got != tc.want {
			t.Errorf("TCPInfoInterval %v: period %v, want %v", tc.interval, got, tc.want)
		}
	}
}
