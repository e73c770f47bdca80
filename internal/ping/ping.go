// Package ping measures a host with ICMP echo, as ping does, through an
// unprivileged ping socket (Linux's SOCK_DGRAM ICMP socket, where
// net.ipv4.ping_group_range admits the user's group) or, when asked, a
// raw socket (root or CAP_NET_RAW): round-trip times, loss, duplicates
// and changes of the replies' TTL. The host needs to run nothing of
// wireperf's.
package ping

import (
	"context"
	"errors"
	"fmt"
	"github.com/wireperf/wireperf/internal/ping/pingplan"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// The settings of a run are its plan's (package pingplan), so that the
// model of a test reads them without the probes.
const (
	DefaultCount    = pingplan.DefaultCount
	DefaultInterval = pingplan.DefaultInterval
	DefaultSize     = pingplan.DefaultSize
	DefaultTimeout  = pingplan.DefaultTimeout
	MaxCount        = pingplan.MaxCount
	MaxSize         = pingplan.MaxSize
	MinInterval     = pingplan.MinInterval
)

// Config is one run's settings.
type Config = pingplan.Config

// DefaultConfig is the run's defaults.
func DefaultConfig() Config { return pingplan.DefaultConfig() }

// Result is what a run measured.
type Result struct {
	Target   string    `json:"target"` // as given
	Addr     string    `json:"addr"`   // the address pinged
	Raw      bool      `json:"raw,omitempty"`
	Size     int       `json:"size"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Sent     int       `json:"sent"`
	Received int       `json:"received"` // requests answered, each once
	// Duplicates are replies beyond the first to a request.
	Duplicates int `json:"duplicates"`
	// LossPercent is the share of requests not answered within the run.
	LossPercent float64 `json:"loss_percent"`
	// RTT is the round-trip times of the first reply to each request, in
	// µs.
	RTT result.Percentiles `json:"rtt_us"`
	// TTL is the first reply's TTL (IPv6's hop limit), 0 if none came or
	// the socket doesn't say; TTLChanges counts the replies whose TTL
	// differs from the reply before (a path that changed length).
	TTL        int `json:"ttl,omitempty"`
	TTLChanges int `json:"ttl_changes"`
}

// tally counts a run's requests and replies. Times are given, so that
// it is tested with a clock of the test's own.
type tally struct {
	mu       sync.Mutex
	count    int // the requests the run sends
	sentAt   map[uint16]time.Time
	answered map[uint16]bool
	hist     *hdrhistogram.Histogram
	sent     int
	received int
	dups     int
	firstTTL int
	lastTTL  int
	ttlMoves int
}

func newTally(count int) *tally {
	// ns from 1 ns to 1 h, 3 significant digits.
	return &tally{count: count, sentAt: map[uint16]time.Time{}, answered: map[uint16]bool{}, hist: hdrhistogram.New(1, int64(time.Hour), 3)}
}

// request records request seq sent at at.
func (t *tally) request(seq uint16, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sentAt[seq] = at
	t.sent++
}

// reply records a reply to seq that came at at with ttl (0: unknown). A
// reply to no request sent is ignored; a second reply to one is a
// duplicate. It says whether every request of the run was sent and has
// its reply.
func (t *tally) reply(seq uint16, at time.Time, ttl int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	sent, ok := t.sentAt[seq]
	if !ok {
		return t.received == t.count
	}
	if t.answered[seq] {
		t.dups++
		return t.received == t.count
	}
	t.answered[seq] = true
	t.received++
	t.hist.RecordValue(max(int64(at.Sub(sent)), 1))
	if ttl > 0 {
		if t.firstTTL == 0 {
			t.firstTTL = ttl
		} else if ttl != t.lastTTL {
			t.ttlMoves++
		}
		t.lastTTL = ttl
	}
	return t.received == t.count
}

// fill writes the counts into r.
func (t *tally) fill(r *Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Sent, r.Received, r.Duplicates = t.sent, t.received, t.dups
	if t.sent > 0 {
		r.LossPercent = 100 * float64(t.sent-t.received) / float64(t.sent)
	}
	r.RTT = stats.Summarize(t.hist, 1)
	r.TTL, r.TTLChanges = t.firstTTL, t.ttlMoves
}

// Resolve is host's address in family ("ip": IPv4 when there is one).
// Its errors don't name host: the caller's message does.
func Resolve(ctx context.Context, host, family string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		if a.Zone() != "" {
			return netip.Addr{}, errors.New("an address with a zone is not supported")
		}
		if (family == "ip4" && !a.Is4()) || (family == "ip6" && !a.Is6()) {
			return netip.Addr{}, fmt.Errorf("not an %s address", map[string]string{"ip4": "IPv4", "ip6": "IPv6"}[family])
		}
		return a, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, family, host)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		if a.Unmap().Is4() {
			return a.Unmap(), nil
		}
	}
	if len(addrs) == 0 {
		return netip.Addr{}, errors.New("no address")
	}
	return addrs[0].WithZone(""), nil
}
