package iperf3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// Int is a JSON integer as iperf3's cJSON writes it: usually plain, but a
// C -1 stored unsigned comes out as 18446744073709551615 (3.12 writes
// that for "retransmits" of a receiving stream), and values past 2^31
// may come as floating point ("1e+16"). Int reads all of these; null
// reads as 0.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	switch s {
	case "null":
		*n = 0
		return nil
	case "true":
		*n = 1
		return nil
	case "false":
		*n = 0
		return nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Int(v)
		return nil
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		*n = Int(int64(v)) // an unsigned C value: wraps, as in C
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("iperf3: %s is not a number", s)
	}
	switch {
	case math.IsNaN(f):
		*n = 0
	case f >= math.MaxInt64:
		*n = math.MaxInt64
	case f <= math.MinInt64:
		*n = math.MinInt64
	default:
		*n = Int(f)
	}
	return nil
}

// Float is a JSON number that may also be null (cJSON writes NaN so).
type Float float64

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("iperf3: %s is not a number", s)
	}
	*f = Float(v)
	return nil
}

// MarshalJSON writes a finite number; NaN and infinities become 0.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// Params is the client's test description (PARAM_EXCHANGE), with the
// keys iperf3 3.12 sends. Booleans iperf3 writes as numbers are Int.
type Params struct {
	TCP              bool   `json:"tcp,omitempty"`
	UDP              bool   `json:"udp,omitempty"`
	SCTP             bool   `json:"sctp,omitempty"`
	Omit             Int    `json:"omit"`
	ServerAffinity   *Int   `json:"server_affinity,omitempty"`
	Time             Int    `json:"time"`
	Num              Int    `json:"num"`
	BlockCount       Int    `json:"blockcount"`
	MSS              Int    `json:"MSS,omitempty"`
	NoDelay          bool   `json:"nodelay,omitempty"`
	MPTCP            bool   `json:"mptcp,omitempty"` // -m, iperf3 3.19 on
	Parallel         Int    `json:"parallel"`
	Reverse          bool   `json:"reverse,omitempty"`
	Bidirectional    bool   `json:"bidirectional,omitempty"`
	Window           Int    `json:"window,omitempty"`
	Len              Int    `json:"len,omitempty"`
	Bandwidth        Int    `json:"bandwidth,omitempty"` // bits per second, per stream
	FQRate           Int    `json:"fqrate,omitempty"`
	PacingTimer      Int    `json:"pacing_timer,omitempty"`
	Burst            Int    `json:"burst,omitempty"`
	TOS              Int    `json:"TOS,omitempty"`
	FlowLabel        Int    `json:"flowlabel,omitempty"`
	Title            string `json:"title,omitempty"`
	ExtraData        string `json:"extra_data,omitempty"`
	Congestion       string `json:"congestion,omitempty"`
	CongestionUsed   string `json:"congestion_used,omitempty"`
	GetServerOutput  Int    `json:"get_server_output,omitempty"`
	UDPCounters64    Int    `json:"udp_counters_64bit,omitempty"`
	RepeatingPayload Int    `json:"repeating_payload,omitempty"`
	SkipRxCopy       Int    `json:"skip_rx_copy,omitempty"` // 3.19 on; an older server ignores it
	ZeroCopy         Int    `json:"zerocopy,omitempty"`
	DontFragment     Int    `json:"dont_fragment,omitempty"`
	AuthToken        string `json:"authtoken,omitempty"`
	ClientVersion    string `json:"client_version,omitempty"`
}

// SpeaksVersion is the iperf3 version whose behaviour this package
// follows; the client announces it as its client_version.
const SpeaksVersion = "3.12"

// DefaultUDPRate is iperf3's UDP rate when -b is not given: 1 Mbit/s.
const DefaultUDPRate = 1_000_000

// pacingTimerUs is the pacing_timer iperf3 3.12 always sends (µs).
const pacingTimerUs = 1000

// wholeSeconds rounds a duration up to whole seconds, as iperf3's
// parameters carry -t and -O.
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// ParamsFromSpec is what our client sends an iperf3 server for s. Times
// go as whole seconds (rounded up: iperf3 has no fractions). A Spec's
// Duration includes its omitted start; iperf3's time does not. Rate is
// iperf3's per-stream -b, and a UDP spec without a rate gets iperf3's
// 1 Mbit/s.
func ParamsFromSpec(s spec.Spec, counters64 bool) Params {
	p := Params{
		Omit:          Int(wholeSeconds(s.Omit)),
		Time:          Int(wholeSeconds(max(s.Duration-s.Omit, 0))),
		Num:           Int(s.Bytes),
		Parallel:      Int(max(s.Streams, 1)),
		Reverse:       s.Reverse,
		Bidirectional: s.Bidir,
		Window:        Int(s.Window),
		Len:           Int(s.Length),
		MSS:           Int(s.MSS),
		NoDelay:       s.NoDelay,
		MPTCP:         s.MPTCP,
		TOS:           Int(s.TOS),
		Title:         s.Title,
		ExtraData:     s.ExtraData,
		Congestion:    s.Congestion,
		PacingTimer:   pacingTimerUs,
		ClientVersion: SpeaksVersion,
	}
	if s.Blocks > 0 { // -k: iperf3 takes it in blocks, and refuses it beside -n
		p.Num, p.BlockCount = 0, Int(s.Blocks)
	}
	p.FQRate = Int(s.FQRate)
	p.FlowLabel = Int(s.FlowLabel)
	if s.RepeatingPayload {
		p.RepeatingPayload = 1
	}
	if s.SkipRxCopy {
		p.SkipRxCopy = 1
	}
	if s.DontFragment {
		p.DontFragment = 1
	}
	if s.Protocol == spec.UDP {
		p.UDP = true
		p.Bandwidth = Int(udpRate(s))
		p.Burst = Int(s.Burst)
		if counters64 {
			p.UDPCounters64 = 1
		}
	} else {
		p.TCP = true
		p.Bandwidth = Int(s.Rate)
	}
	return p
}

// udpRate is a UDP spec's per-stream rate in bits per second.
func udpRate(s spec.Spec) float64 {
	switch {
	case s.Rate > 0:
		return s.Rate
	case s.PPS > 0:
		return float64(s.PPS) * float64(s.Length) * 8
	case s.Spacing > 0:
		return float64(s.Length) * 8 / s.Spacing.Seconds()
	}
	return DefaultUDPRate
}

// ErrUnsupported marks parameters this implementation cannot serve.
// errors.Is(err, errors.ErrUnsupported) holds for it too.
var ErrUnsupported = fmt.Errorf("%w", errors.ErrUnsupported)

// Spec turns a client's parameters into the spec our server runs. The
// server reports every second, as iperf3's does. It refuses what it
// cannot do: SCTP; zero-copy is accepted but ignored. The credentials
// (AuthToken) are the server's to check (ServeConfig.Auth), as in
// iperf3, whose server without keys ignores them.
func (p Params) Spec() (spec.Spec, error) {
	s := spec.Spec{Protocol: spec.TCP, Interval: spec.DefaultInterval}
	switch {
	case p.SCTP:
		return s, fmt.Errorf("SCTP: %w", ErrUnsupported)
	case p.UDP:
		s.Protocol = spec.UDP
	}
	if p.Time < 0 || p.Time > 1<<31 || p.Omit < 0 || p.Omit > 1<<31 {
		return s, errors.New("iperf3 parameters: time or omit out of range")
	}
	s.Streams = int(max(p.Parallel, 1))
	if p.Parallel > spec.MaxStreams {
		s.Streams = spec.MaxStreams + 1 // let Validate name it
	}
	s.Omit = time.Duration(p.Omit) * time.Second
	s.Duration = time.Duration(p.Time) * time.Second
	if s.Duration > 0 {
		s.Duration += s.Omit // iperf3 runs -O on top of -t; a Spec's Duration includes it
	}
	s.Bytes = int64(p.Num)
	s.Length = int(p.Len)
	if p.Len <= 0 || p.Len > spec.MaxLength {
		if p.Len != 0 {
			s.Length = spec.MaxLength + 1
		} else if s.Protocol == spec.UDP {
			s.Length = spec.DefaultUDPLength
		} else {
			s.Length = spec.DefaultTCPLength
		}
	}
	if p.BlockCount > 0 && s.Bytes == 0 {
		s.Blocks = int64(p.BlockCount)
		s.Bytes = s.Blocks * int64(s.Length)
	}
	if s.Duration == 0 && s.Bytes == 0 {
		s.Duration = spec.DefaultDuration // iperf3 -t 0 -n 0: its default
	}
	s.Reverse = p.Reverse && !p.Bidirectional
	s.Bidir = p.Bidirectional
	s.Window = int64(p.Window)
	s.MSS = int(p.MSS)
	s.NoDelay = p.NoDelay
	s.MPTCP = p.MPTCP && s.Protocol == spec.TCP
	s.Congestion = p.Congestion
	s.TOS = int(p.TOS)
	s.Title = p.Title
	s.ExtraData = p.ExtraData
	s.RepeatingPayload = p.RepeatingPayload != 0
	s.SkipRxCopy = p.SkipRxCopy != 0 && s.Protocol == spec.TCP // 3.21 sends it for UDP too, where ours read headers
	s.FQRate = float64(max(p.FQRate, 0))
	s.DontFragment = p.DontFragment != 0 && s.Protocol == spec.UDP // iperf3 ignores it for TCP
	if p.FlowLabel > 0 && p.FlowLabel <= spec.MaxFlowLabel {
		s.FlowLabel = int(p.FlowLabel) // the client's label; our sockets keep theirs, as iperf3's server does
	}
	if p.Bandwidth > 0 {
		s.Rate = float64(p.Bandwidth)
	}
	if s.Protocol == spec.UDP {
		s.Burst = int(max(p.Burst, 0))
		if s.Rate == 0 {
			s.Burst = 0 // unlimited: iperf3 sends as fast as it can
		}
	}
	return s, s.Validate()
}

// marshalParams is for tests and logs.
func (p Params) String() string {
	b, _ := json.Marshal(p)
	return string(b)
}
