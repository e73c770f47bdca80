package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/spec"
)

// fakeClock is the caps' clock in tests.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time         { return c.t }
func (c *fakeClock) add(d time.Duration)    { c.t = c.t.Add(d) }
func newFakeClock(at string) *fakeClock     { t, _ := time.Parse(time.RFC3339, at); return &fakeClock{t} }
func capsWith(l Limits, c *fakeClock) *caps { return newCaps(l, c.now) }

// The rate is read over the last window only, once a full window has
// passed: a burst that has left the window no longer counts.
func TestRateWindow(t *testing.T) {
	w := &rateWindow{window: time.Second}
	s := time.Second / 4
	steps := []struct {
		at       time.Duration
		bytes    int64
		wantBps  float64
		wantFull bool
	}{
		{s, 1e6, 0, false},
		{2 * s, 2e6, 0, false},
		{3 * s, 3e6, 0, false},
		{4 * s, 4e6, 32e6, true}, // 4 MB in the first second
		{5 * s, 4e6, 24e6, true}, // 0.25 s to 1.25 s: 3 MB
		{8 * s, 4e6, 0, true},    // nothing moved for a second
		{9 * s, 4e6 + 125e3, 1e6, true},
	}
	for _, st := range steps {
		bps, full := w.add(st.at, st.bytes)
		if full != st.wantFull || bps != st.wantBps {
			t.Errorf("at %v with %d bytes: %v bit/s, full %v; want %v, %v", st.at, st.bytes, bps, full, st.wantBps, st.wantFull)
		}
	}
	if len(w.samples) > 6 {
		t.Errorf("%d samples kept for a one-second window read every 250 ms", len(w.samples))
	}
	if got := (&rateWindow{window: 5 * time.Second}).tick(); got != time.Second {
		t.Errorf("tick of a 5 s window: %v, want 1s", got)
	}
}

// --server-bitrate-limit: a test is refused when -b × streams (twice with
// --bidir) asks for more, as iperf3 3.21 refuses it; a running test is
// ended once its bytes, both ways, average over the limit across a whole
// window, and not before the window is whole.
func TestCapsTestRate(t *testing.T) {
	clk := newFakeClock("2026-12-06T10:00:00Z")
	l := Limits{BitrateLimit: 10e6, BitrateWindow: time.Second}
	c := capsWith(l, clk)
	asked := spec.Default()
	asked.Rate, asked.Streams, asked.Bidir = 3e6, 2, true // 12 Mbit/s
	if _, err := c.admit("10.0.0.1", asked); !errors.Is(err, iperf3.ErrTotalRate) || !strings.Contains(err.Error(), "asks for 12") {
		t.Errorf("-b 3M -P 2 --bidir under a 10 Mbit/s limit: %v, want iperf3's reason and the rate asked", err)
	}
	asked.Bidir = false // 6 Mbit/s
	m, err := c.admit("10.0.0.1", asked)
	if err != nil {
		t.Fatalf("-b 3M -P 2 under a 10 Mbit/s limit: %v", err)
	}
	if err := m.Read(0); err != nil { // the streams start: the window's start
		t.Fatal(err)
	}
	// 2 MB every 200 ms: 80 Mbit/s, ended at the first whole window.
	var moved int64
	for i := 1; i <= 5; i++ {
		clk.add(200 * time.Millisecond)
		moved += 2e6
		err := m.Read(moved)
		if i < 5 && err != nil {
			t.Fatalf("ended after %v, before a whole window: %v", time.Duration(i)*200*time.Millisecond, err)
		}
		if i == 5 && (!errors.Is(err, iperf3.ErrTotalRate) || !strings.Contains(err.Error(), "--server-bitrate-limit")) {
			t.Fatalf("80 Mbit/s over a whole window under a 10 Mbit/s limit: %v", err)
		}
	}
	m.Close()
	// 1 MB a second, 8 Mbit/s, runs on.
	m, err = c.admit("10.0.0.1", spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	moved = 0
	for range 20 {
		clk.add(250 * time.Millisecond)
		moved += 250e3
		if err := m.Read(moved); err != nil {
			t.Fatalf("8 Mbit/s under 10 Mbit/s ended: %v", err)
		}
	}
}

// --server-total-bitrate-limit: tests that start inside the total keep
// running; once the total is over it for a whole window the newest test
// alone is ended, new tests are refused while the total and their -b
// pass it, and the older tests are not ended for the ended one's bytes.
func TestCapsTotalRate(t *testing.T) {
	clk := newFakeClock("2026-12-06T10:00:00Z")
	c := capsWith(Limits{TotalBitrateLimit: 100e6, TotalBitrateWindow: time.Second}, clk)
	tooMuch := spec.Default()
	tooMuch.Rate = 120e6
	if _, err := c.admit("10.0.0.1", tooMuch); !errors.Is(err, iperf3.ErrTotalRate) {
		t.Errorf("-b 120M on an idle server with a 100 Mbit/s total: %v, want a refusal", err)
	}
	old, err := c.admit("10.0.0.1", spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	step := 100 * time.Millisecond
	var oldMoved, newMoved int64
	// The old test alone at 60 Mbit/s for 2 s.
	for range 20 {
		clk.add(step)
		oldMoved += 750e3
		if err := old.Read(oldMoved); err != nil {
			t.Fatalf("60 Mbit/s alone under 100: %v", err)
		}
	}
	asking := spec.Default()
	asking.Rate = 50e6
	if _, err := c.admit("10.0.0.2", asking); !errors.Is(err, iperf3.ErrTotalRate) || !strings.Contains(err.Error(), "--server-total-bitrate-limit") {
		t.Errorf("-b 50M beside 60 Mbit/s under a 100 Mbit/s total: %v, want a refusal", err)
	}
	newer, err := c.admit("10.0.0.2", spec.Default())
	if err != nil {
		t.Fatalf("a test asking no rate beside 60 Mbit/s: %v", err)
	}
	// Both at 60 Mbit/s: 120 together. The newer test is ended, the
	// older never.
	var ended time.Duration
	for i := 1; i <= 30 && ended == 0; i++ {
		clk.add(step)
		oldMoved += 750e3
		newMoved += 750e3
		if err := old.Read(oldMoved); err != nil {
			t.Fatalf("the older test was ended: %v", err)
		}
		if err := newer.Read(newMoved); err != nil {
			if !errors.Is(err, iperf3.ErrTotalRate) || !strings.Contains(err.Error(), "newest") {
				t.Fatalf("the newer test ended with %v", err)
			}
			ended = time.Duration(i) * step
		}
	}
	if ended == 0 || ended > 1200*time.Millisecond {
		t.Fatalf("the newer test ended after %v; want it within a window and a read of the total going over", ended)
	}
	newer.Close()
	for range 30 {
		clk.add(step)
		oldMoved += 750e3
		if err := old.Read(oldMoved); err != nil {
			t.Fatalf("the older test alone after the newer one ended: %v", err)
		}
	}
	if _, err := c.admit("10.0.0.3", spec.Default()); err != nil {
		t.Errorf("a test beside 60 Mbit/s once the total is back under: %v", err)
	}
}

// --client-daily-bytes: a client's bytes of all its tests, both ways,
// count against its budget; past it its running test is ended and a new
// one refused, another client is not; the count starts again at 00:00
// UTC.
func TestCapsDailyBudget(t *testing.T) {
	clk := newFakeClock("2026-12-06T23:59:00Z")
	c := capsWith(Limits{ClientDailyBytes: 10e6}, clk)
	a, err := c.admit("10.0.0.0/24", spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.admit("10.0.0.0/24", spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	if err := a.Read(6e6); err != nil {
		t.Fatal(err)
	}
	if err := b.Read(3e6); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	err = b.Read(4e6) // 6 + 4 = 10 MB: the budget is used
	if !errors.Is(err, iperf3.ErrTotalRate) || !strings.Contains(err.Error(), "--client-daily-bytes") || !strings.Contains(err.Error(), "00:00 UTC") {
		t.Fatalf("10 MB of a 10 MB budget: %v, want the test ended with the budget", err)
	}
	a.Close()
	b.Close()
	if _, err := c.admit("10.0.0.0/24", spec.Default()); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a new test after the budget is used: %v, want a one-line refusal", err)
	}
	if m, err := c.admit("10.0.1.0/24", spec.Default()); err != nil {
		t.Errorf("another client: %v", err)
	} else {
		m.Close()
	}
	clk.add(time.Minute) // 00:01 UTC the next day
	m, err := c.admit("10.0.0.0/24", spec.Default())
	if err != nil {
		t.Fatalf("the next day: %v", err)
	}
	if err := m.Read(9e6); err != nil {
		t.Errorf("9 MB of a new day's 10 MB: %v", err)
	}
	m.Close()
}

// The budget's table stays within MaxBudgetClients however many clients
// come in a day; the client forgotten is the one that moved least.
func TestCapsBudgetBounded(t *testing.T) {
	clk := newFakeClock("2026-12-06T10:00:00Z")
	c := capsWith(Limits{ClientDailyBytes: 1 << 40}, clk)
	heavy, err := c.admit("heavy", spec.Default())
	if err != nil {
		t.Fatal(err)
	}
	if err := heavy.Read(1 << 30); err != nil {
		t.Fatal(err)
	}
	for i := range MaxBudgetClients + 100 {
		m, err := c.admit(fmt.Sprintf("client-%d", i), spec.Default())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Read(int64(1 + i%7)); err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	if n := len(c.used); n > MaxBudgetClients {
		t.Errorf("%d clients remembered, bound %d", n, MaxBudgetClients)
	}
	if c.used["heavy"] != 1<<30 {
		t.Errorf("the heaviest client was forgotten: %d bytes", c.used["heavy"])
	}
	heavy.Close()
	if len(c.running) != 0 {
		t.Errorf("%d tests still count as running after every one closed", len(c.running))
	}
}

// A server without byte caps meters nothing.
func TestCapsInactive(t *testing.T) {
	c := newCaps(DefaultLimits(), nil)
	m, err := c.admit("10.0.0.1", spec.Default())
	if err != nil || m != nil || c.active() {
		t.Errorf("default limits: meter %v, err %v, active %v; want none", m, err, c.active())
	}
	if meterFunc(m) != nil {
		t.Error("a nil meter reads")
	}
}
