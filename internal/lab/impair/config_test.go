package impair

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/units"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("delay=107.5ms, jitter=1ms dist=normal keeporder loss=0.1% ge=1%/25% reorder=0.5% gap=3 hold=20ms dup=0.01 rate=1g overhead=38 queue=1M")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Delay: 107500 * time.Microsecond, Jitter: time.Millisecond, Distribution: Normal, KeepOrder: true,
		Loss: 0.001, GE: &GilbertElliott{P: 0.01, R: 0.25, LossBad: 1}, Reorder: 0.005, ReorderGap: 3,
		ReorderHold: 20 * time.Millisecond, Duplicate: 0.01, Rate: 1e9, Overhead: 38, QueueLimit: 1 << 20}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	back, err := ParseConfig(c.String())
	if err != nil || !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip via %q: %+v, %v", c.String(), back, err)
	}
	if z, err := ParseConfig("none"); err != nil || !reflect.DeepEqual(z, Config{}) || z.String() != "none" {
		t.Fatalf("none: %+v %v", z, err)
	}
	ge, err := ParseConfig("ge=2%/20%/90%/0.1%")
	if err != nil || *ge.GE != (GilbertElliott{P: 0.02, R: 0.2, LossBad: 0.9, LossGood: 0.001}) {
		t.Fatalf("ge: %+v %v", ge.GE, err)
	}
	for _, bad := range []string{"delay=-1ms", "loss=101%", "loss=-1%", "ge=1%", "ge=1/2/3/4/5", "rate=1x",
		"frobnicate=1", "delay", "gap=-2", "dist=poisson", "loss=NaN", "rate=inf", "rate=4"} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("ParseConfig(%q) accepted", bad)
		}
	}
}

func TestParseUnits(t *testing.T) {
	// Rates and sizes are read as every wireperf flag reads them
	// (units.ParseRate and units.ParseSize), and printed back the same way.
	c, err := ParseConfig("rate=1g,queue=64K")
	if err != nil || c.Rate != 1e9 || c.QueueLimit != 64<<10 {
		t.Fatalf("ParseConfig(rate=1g,queue=64K) = %+v, %v", c, err)
	}
	if got := c.String(); got != "rate=1g,queue=64K" {
		t.Errorf("String() = %q; want rate=1g,queue=64K", got)
	}
	// A rate's upper-case suffix is a power of 1000, as iperf3 reads -b;
	// a size's is a power of 1024.
	if c, err := ParseConfig("rate=1G,queue=1M"); err != nil || c.Rate != 1e9 || c.QueueLimit != 1<<20 || c.String() != "rate=1g,queue=1M" {
		t.Errorf("ParseConfig(rate=1G,queue=1M) = %+v (%s), %v; want 1e9 bit/s and 2^20 bytes", c, c.String(), err)
	}
	for _, bad := range []string{"rate=100mbit", "rate=1e+09", "queue=64KB"} {
		_, err := ParseConfig(bad)
		if err == nil {
			t.Errorf("ParseConfig(%q) accepted; the client's -b refuses the same text", bad)
			continue
		}
		_, v, _ := strings.Cut(bad, "=")
		_, rerr := units.ParseRate(v)
		_, serr := units.ParseSize(v)
		if !strings.Contains(err.Error(), rerr.Error()) && !strings.Contains(err.Error(), serr.Error()) {
			t.Errorf("ParseConfig(%q) = %v; want the units parser's error", bad, err)
		}
	}
	probs := map[string]float64{"0.1%": 0.001, "0.001": 0.001, "100%": 1, "0": 0}
	for s, want := range probs {
		if got, err := ParsePercent(s); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", "none", "delay=107.5ms,loss=0.1%", "ge=1%/25%/90%/0.1% rate=1g queue=64K",
		"jitter=2ms dist=normal keeporder reorder=1% gap=2 hold=1s dup=0.5% overhead=14", "rate=1e+09", "loss=1e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConfig(s)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("ParseConfig(%q) returned an invalid config: %v", s, err)
		}
		text := c.String()
		if strings.ContainsAny(text, " \t\n") {
			t.Fatalf("String() = %q contains a separator", text)
		}
		back, err := ParseConfig(text)
		if err != nil {
			t.Fatalf("ParseConfig(String()) = %v for %q (from %q)", err, text, s)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip changed %+v into %+v via %q", c, back, text)
		}
		// A valid config always yields a working Direction.
		if _, err := NewDirection[int](c, 1, 2); err != nil {
			t.Fatal(err)
		}
	})
}

// The default memory limit holds a configured path twice over, plus a
// second of lateness at the rate: at 215 ms and 1 Gbit/s with the 50 ms
// queue that is 2 × (13.4375 + 6.25) MB + 125 MB + 16 MiB.
func TestDefaultMemoryLimit(t *testing.T) {
	c := Config{Delay: 107500 * time.Microsecond, Rate: 1e9}
	held, ok := c.MaxHeldBytes()
	if !ok || held != 13_437_500+6_250_000 {
		t.Fatalf("MaxHeldBytes = %d, %v; want 19687500", held, ok)
	}
	if got, want := c.DefaultMemoryLimit(), int64(2*19_687_500+125_000_000+16<<20); got != want {
		t.Errorf("DefaultMemoryLimit = %d, want %d", got, want)
	}
	if got := (Config{Delay: time.Second}).DefaultMemoryLimit(); got != 1<<30 {
		t.Errorf("without a rate cap: %d, want 1 GiB", got)
	}
	// A path that fills its queue and delay line never reaches the
	// limit: every packet is queued or dropped by the queue, none by the
	// limit.
	d, err := NewDirection[int](c, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	d.SetMemoryLimit(c.DefaultMemoryLimit())
	for i := 0; i < 200_000; i++ {
		d.Arrive(int64(i)*1000, i, 1500) // 12 Gbit/s offered for 0.2 s
	}
	cs := d.Counters()
	if cs.DroppedLimit != 0 || cs.DroppedQueue == 0 {
		t.Errorf("overload of a configured path: limit %d (want 0), queue %d (want > 0)", cs.DroppedLimit, cs.DroppedQueue)
	}
	// A limit below what the path holds is what counts DroppedLimit.
	d2, _ := NewDirection[int](c, 1, 1)
	d2.SetMemoryLimit(held / 2)
	for i := 0; i < 200_000; i++ {
		d2.Arrive(int64(i)*1000, i, 1500)
	}
	if d2.Counters().DroppedLimit == 0 {
		t.Error("a limit of half the path's bytes dropped nothing")
	}
}

// Text is String for people: the queue limit in a byte unit, the rest as
// the flags take it.
func TestConfigText(t *testing.T) {
	c, err := ParseConfig("delay=10ms,queue=1M")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Text(), "delay=10ms,queue=1.00 MBytes"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if got, want := c.String(), "delay=10ms,queue=1M"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestMaxDelay: the most a packet spends in a direction on time. The
// lab's 215 ms, 1g path: 107.5 ms of delay, a 50 ms queue (6,250,000
// bytes at 1 Gbit/s) and the packet's own 1538 bytes on the wire.
func TestMaxDelay(t *testing.T) {
	c := Config{Delay: 107500 * time.Microsecond, Rate: 1e9, Overhead: 38, QueueLimit: 6_250_000}
	want := 107500*time.Microsecond + 50*time.Millisecond + 12304*time.Nanosecond
	if got := c.MaxDelay(1500); got != want {
		t.Errorf("%v, want %v", got, want)
	}
	if got := (Config{Delay: time.Millisecond, Jitter: time.Millisecond, Distribution: Normal}).MaxDelay(1500); got != 5*time.Millisecond {
		t.Errorf("normal jitter: %v, want delay + 4σ = 5ms", got)
	}
	if got := (Config{Delay: time.Millisecond, Jitter: time.Millisecond}).MaxDelay(1500); got != 2*time.Millisecond {
		t.Errorf("uniform jitter: %v, want 2ms", got)
	}
}
