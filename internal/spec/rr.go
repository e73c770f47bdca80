package spec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RR is the protocol of a request-response (latency) test: the client
// sends requests, the server answers each (docs/metrics.md,
// "Request-response (latency)").
const RR = "rr"

// Request-response modes.
const (
	RRUDP = "udp" // one datagram each way per transaction
	RRTCP = "tcp" // one TCP connection for the whole test
	RRCRR = "crr" // a new TCP connection for every transaction
)

// Request-response limits.
const (
	// RRMinSize is the smallest request or response: the rr header
	// (internal/rr.HeaderLen) must fit.
	RRMinSize = 48
	// RRMaxTCPSize bounds a message on TCP.
	RRMaxTCPSize = 1 << 20
	// RRMaxSizes bounds the request sizes of one test.
	RRMaxSizes = 1024
	// RRMaxInterval bounds the gap between isochronous requests.
	RRMaxInterval = 10 * time.Second
	// DefaultRRDuration is a size point's length when neither -t nor
	// --count is given.
	DefaultRRDuration = 5 * time.Second
)

// RRMaxSize is the largest request or response of a mode.
func RRMaxSize(mode string) int {
	if mode == RRUDP {
		return MaxUDPLength
	}
	return RRMaxTCPSize
}

// RRSizeList is RRSizes as numbers; nil if it does not parse.
func (s Spec) RRSizeList() []int {
	if s.RRSizes == "" {
		return nil
	}
	var out []int
	for _, f := range strings.Split(s.RRSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// FormatRRSizes writes sizes as RRSizes holds them. (A string keeps the
// Spec comparable with ==.)
func FormatRRSizes(sizes ...int) string {
	f := make([]string, len(sizes))
	for i, n := range sizes {
		f[i] = strconv.Itoa(n)
	}
	return strings.Join(f, ",")
}

// RRResponseSize is the response to a request of n bytes.
func (s Spec) RRResponseSize(n int) int {
	if s.RRResponse > 0 {
		return s.RRResponse
	}
	return n
}

// RRLargest returns the largest request and the largest response of the
// test, which bound what the server reads and writes.
func (s Spec) RRLargest() (request, response int) {
	for _, n := range s.RRSizeList() {
		request = max(request, n)
		response = max(response, s.RRResponseSize(n))
	}
	return request, response
}

// RRTotal bounds a request-response test's length when it runs by time:
// each size point runs for Duration. It is 0 for a test run by count.
func (s Spec) RRTotal() time.Duration {
	if s.Duration <= 0 {
		return 0
	}
	return s.Duration * time.Duration(max(1, len(s.RRSizeList())))
}

// validateRR checks a request-response spec. Fields of bulk tests that
// do not apply must be left zero, so that an archived spec says exactly
// what ran.
func (s Spec) validateRR() error {
	switch s.RRMode {
	case RRUDP, RRTCP, RRCRR:
	default:
		return fmt.Errorf("rr mode %q: want udp, tcp or crr", s.RRMode)
	}
	if s.Streams != 1 {
		return fmt.Errorf("rr: -P %d: a request-response test has one stream", s.Streams)
	}
	if s.Reverse || s.Bidir {
		return errors.New("rr: -R and --bidir do not apply to a request-response test")
	}
	sizes := s.RRSizeList()
	if s.RRSizes != "" && sizes == nil {
		return fmt.Errorf("--sizes %q: not a list of sizes", s.RRSizes)
	}
	if len(sizes) == 0 || len(sizes) > RRMaxSizes {
		return fmt.Errorf("--sizes: want 1 to %d sizes, have %d", RRMaxSizes, len(sizes))
	}
	limit := RRMaxSize(s.RRMode)
	for _, n := range sizes {
		if n < RRMinSize || n > limit {
			return fmt.Errorf("--sizes: %d bytes: want %d to %d for %s", n, RRMinSize, limit, s.RRMode)
		}
	}
	if s.RRResponse != 0 && (s.RRResponse < RRMinSize || s.RRResponse > limit) {
		return fmt.Errorf("--response-size %d: want %d to %d for %s", s.RRResponse, RRMinSize, limit, s.RRMode)
	}
	if s.Duration < 0 || s.RRCount < 0 {
		return errors.New("rr: -t and --count must not be negative")
	}
	if s.Duration == 0 && s.RRCount == 0 {
		return errors.New("rr: give -t or --count: the test would never end")
	}
	if s.RRInterval < 0 || s.RRInterval > RRMaxInterval {
		return fmt.Errorf("--interval %v: want 0 (back to back) to %v", s.RRInterval, RRMaxInterval)
	}
	if s.Window < 0 || s.Window > 1<<31-1 {
		return fmt.Errorf("-w %d: want 0 to 2 GiB", s.Window)
	}
	if s.TOS < 0 || s.TOS > 255 {
		return fmt.Errorf("--tos %d: want 0 to 255", s.TOS)
	}
	if len(s.Title) > MaxTitleLength {
		return fmt.Errorf("-T: title longer than %d bytes", MaxTitleLength)
	}
	return nil
}
