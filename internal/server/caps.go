package server

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/units"
)

// Every byte cap that ends or refuses a test (--server-bitrate-limit,
// --server-total-bitrate-limit, --client-daily-bytes) says
// iperf3.ErrTotalRate, iperf3's IETOTALRATE, first: an iperf3 client
// hears iperf3's code for it, and a wireperf client the whole reason.

// MaxBudgetClients bounds the clients whose bytes of the day a server
// remembers: 65,536 entries of about 100 bytes.
const MaxBudgetClients = 1 << 16

// caps counts the bytes of running tests for the limits on rates and
// bytes: each test's rate over its window (Limits.BitrateLimit), all
// tests' rate together (Limits.TotalBitrateLimit) and each client's bytes
// of the day (Limits.ClientDailyBytes). Tests report their moved bytes
// through a testMeter while they run; the clock is injected so that the
// day's roll-over can be tested.
type caps struct {
	limits Limits
	now    func() time.Time

	mu      sync.Mutex
	seq     uint64
	running map[*testMeter]struct{}
	total   rateWindow // all tests' bytes, since epoch
	epoch   time.Time
	moved   int64     // all tests' bytes so far
	sampled time.Time // when total last took a sample
	// totalBps is the total rate over the last full window, 0 until
	// there is one.
	totalBps float64
	day      string           // the UTC day used counts
	used     map[string]int64 // a client's bytes today
}

func newCaps(l Limits, now func() time.Time) *caps {
	if now == nil {
		now = time.Now
	}
	c := &caps{limits: l, now: now, running: map[*testMeter]struct{}{}, used: map[string]int64{}}
	c.epoch = now()
	c.total.window = l.TotalBitrateWindow
	return c
}

// active says whether any byte cap is set; without one no test is metered.
func (c *caps) active() bool {
	return c.limits.BitrateLimit > 0 || c.limits.TotalBitrateLimit > 0 || c.limits.ClientDailyBytes > 0
}

// every is how often a running test's bytes are read: a fifth of the
// shortest window, from 100 ms to 1 s.
func (c *caps) every() time.Duration {
	w := time.Duration(0)
	for _, x := range []time.Duration{c.limits.BitrateWindow, c.limits.TotalBitrateWindow} {
		if x > 0 && (w == 0 || x < w) {
			w = x
		}
	}
	if w == 0 {
		return time.Second
	}
	return (&rateWindow{window: w}).tick()
}

// admit checks a new test from client against the byte caps before it
// starts: the rate it asks for (-b × streams, twice with --bidir) against
// the per-test limit, as iperf3 checks it, and against what the total
// leaves; a client that has used its day's bytes is refused. It returns
// the test's meter.
func (c *caps) admit(client string, s spec.Spec) (*testMeter, error) {
	if !c.active() {
		return nil, nil
	}
	asked := requestedRate(s)
	l := c.limits
	if l.BitrateLimit > 0 && asked > l.BitrateLimit {
		return nil, fmt.Errorf("%w: the test asks for %s, the limit is %s (--server-bitrate-limit)", iperf3.ErrTotalRate, rateText(asked), rateText(l.BitrateLimit))
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rollDay(now)
	if l.TotalBitrateLimit > 0 && (asked > l.TotalBitrateLimit || len(c.running) > 0 && c.totalBps+asked > l.TotalBitrateLimit) {
		return nil, fmt.Errorf("%w: the running tests move %s and this one asks for %s, the server's total limit is %s (--server-total-bitrate-limit); try again later",
			iperf3.ErrTotalRate, rateText(c.totalBps), rateText(asked), rateText(l.TotalBitrateLimit))
	}
	if l.ClientDailyBytes > 0 && c.used[client] >= l.ClientDailyBytes {
		return nil, c.budgetError(client)
	}
	c.seq++
	m := &testMeter{c: c, client: client, seq: c.seq, started: now, window: rateWindow{window: l.BitrateWindow}}
	c.running[m] = struct{}{}
	return m, nil
}

func (c *caps) budgetError(client string) error {
	return fmt.Errorf("%w: %s has moved %s today, its budget is %s a day (--client-daily-bytes); it starts again at 00:00 UTC",
		iperf3.ErrTotalRate, client, units.SizeString(c.used[client]), units.SizeString(c.limits.ClientDailyBytes))
}

// rollDay forgets the counts of an earlier day. Called with mu held.
func (c *caps) rollDay(now time.Time) {
	if d := now.UTC().Format(time.DateOnly); d != c.day {
		c.day = d
		clear(c.used)
	}
}

// charge adds bytes to client's count of the day. Past MaxBudgetClients
// the client with the fewest bytes is forgotten: it gives back the least
// budget. Called with mu held.
func (c *caps) charge(client string, bytes int64) {
	if _, ok := c.used[client]; !ok && len(c.used) >= MaxBudgetClients {
		least, leastBytes := "", int64(-1)
		for k, v := range c.used {
			if leastBytes < 0 || v < leastBytes {
				least, leastBytes = k, v
			}
		}
		delete(c.used, least)
	}
	c.used[client] += bytes
}

// testMeter is one running test's account.
type testMeter struct {
	c       *caps
	client  string
	seq     uint64
	started time.Time
	window  rateWindow
	last    int64 // moved at the last read
	begun   bool  // read once: started is when the test's streams started
	ended   bool  // a cap ended it
	done    bool
}

// Read takes the bytes the test's streams have moved so far, both ways,
// and returns an error, its reason, when the test must end: its own rate
// over its window is over the limit, the server's total is over its limit
// and this is the newest test, or its client has used the day's budget.
func (m *testMeter) Read(moved int64) error {
	if m == nil {
		return nil
	}
	c := m.c
	l := c.limits
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.done {
		return nil
	}
	if !m.begun { // the test's first read: its streams start now
		m.begun, m.started = true, now
	}
	delta := max(moved-m.last, 0)
	m.last = max(moved, m.last)
	c.rollDay(now)
	if l.ClientDailyBytes > 0 {
		c.charge(m.client, delta)
	}
	if m.ended {
		return nil // its last bytes count to its client, but not to the total of the tests that go on
	}
	c.moved += delta
	if l.TotalBitrateLimit > 0 && now.Sub(c.sampled) >= c.every()/2 {
		c.sampled = now
		if bps, full := c.total.add(now.Sub(c.epoch), c.moved); full {
			c.totalBps = bps
		}
	}
	if l.BitrateLimit > 0 {
		if bps, full := m.window.add(now.Sub(m.started), moved); full && bps > l.BitrateLimit {
			m.ended = true
			return fmt.Errorf("%w: %s over the last %v, its limit is %s (--server-bitrate-limit)", iperf3.ErrTotalRate, rateText(bps), l.BitrateWindow, rateText(l.BitrateLimit))
		}
	}
	if l.ClientDailyBytes > 0 && c.used[m.client] >= l.ClientDailyBytes {
		m.ended = true
		return c.budgetError(m.client)
	}
	if l.TotalBitrateLimit > 0 && c.totalBps > l.TotalBitrateLimit && m.newest() {
		err := fmt.Errorf("%w: the server's tests together moved %s over the last %v, its total limit is %s (--server-total-bitrate-limit); the newest test is ended",
			iperf3.ErrTotalRate, rateText(c.totalBps), l.TotalBitrateWindow, rateText(l.TotalBitrateLimit))
		// The ended test's bytes stay in the window: judge the total
		// again only once a whole window has passed without them, so
		// that one excess ends one test.
		c.total.samples, c.totalBps = nil, 0
		c.epoch, c.moved = now, 0
		m.ended = true
		return err
	}
	return nil
}

// newest says whether m is the test admitted last of those running.
// Called with mu held.
func (m *testMeter) newest() bool {
	for o := range m.c.running {
		if o.seq > m.seq {
			return false
		}
	}
	return true
}

// Close ends the test's account: it no longer counts as running. Its
// bytes are those of its last Read.
func (m *testMeter) Close() {
	if m == nil {
		return
	}
	m.c.mu.Lock()
	m.done = true
	delete(m.c.running, m)
	m.c.mu.Unlock()
}

// meterFunc is m's Read for a test's runner, nil without a meter.
func meterFunc(m *testMeter) func(moved int64) error {
	if m == nil {
		return nil
	}
	return m.Read
}

// requestedRate is what a test asks to move, as iperf3 reckons it: -b per
// stream, each stream, both ways with --bidir; 0 when it asks no rate.
func requestedRate(s spec.Spec) float64 {
	r := s.Rate
	if s.FQRate > r {
		r = s.FQRate
	}
	n := float64(s.Streams)
	if s.Bidir {
		n *= 2
	}
	return r * n
}

func rateText(bps float64) string {
	return strings.TrimSpace(units.FormatRate(bps, units.AdaptiveBits))
}

// rateWindow averages a byte counter over the last window: the rate
// --server-bitrate-limit bounds, read once a full window has passed.
type rateWindow struct {
	window  time.Duration
	samples []rateSample
}

type rateSample struct {
	at    time.Duration
	bytes int64
}

// tick is how often the counter is read: a fifth of the window, from
// 100 ms to 1 s.
func (w *rateWindow) tick() time.Duration {
	return min(max(w.window/5, 100*time.Millisecond), time.Second)
}

// add records the counter at a time since the start and returns the rate
// in bit/s over the last window, and whether a full window has passed.
func (w *rateWindow) add(at time.Duration, bytes int64) (bps float64, full bool) {
	if len(w.samples) == 0 {
		w.samples = append(w.samples, rateSample{}) // the start: nothing moved
	}
	w.samples = append(w.samples, rateSample{at, bytes})
	// Keep the newest sample at least a window old as the base.
	for len(w.samples) > 2 && at-w.samples[1].at >= w.window {
		w.samples = w.samples[1:]
	}
	base := w.samples[0]
	span := at - base.at
	if span < w.window || span <= 0 {
		return 0, false
	}
	return float64(bytes-base.bytes) * 8 / span.Seconds(), true
}
