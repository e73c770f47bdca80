package trace

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPathAndChanged(t *testing.T) {
	r := Report{Hops: []Hop{{TTL: 1, Addr: "10.0.0.1"}, {TTL: 2}, {TTL: 3, Addr: "10.0.2.2"}, {TTL: 4}, {TTL: 5}}}
	if got, want := r.Path(), []string{"10.0.0.1", None, "10.0.2.2"}; !slices.Equal(got, want) {
		t.Fatalf("path %q, want %q", got, want)
	}
	if got := ParsePathKey(PathKey(r.Path())); !slices.Equal(got, r.Path()) {
		t.Fatalf("key read back as %q", got)
	}
	a := []string{"10.0.0.1", "10.0.1.1", "10.0.2.2"}
	for _, c := range []struct {
		cur     []string
		changed bool
	}{
		{[]string{"10.0.0.1", "10.0.1.1", "10.0.2.2"}, false},
		{[]string{"10.0.0.1", None, "10.0.2.2"}, false}, // a silent hop is no evidence
		{[]string{"10.0.0.1", "10.0.3.1", "10.0.2.2"}, true},
		{[]string{"10.0.0.1", "10.0.2.2"}, true},
		{[]string{"10.0.0.1", "10.0.1.1", "10.0.4.1", "10.0.2.2"}, true},
	} {
		if got := Changed(a, c.cur); got != c.changed {
			t.Errorf("Changed(%q, %q) = %v, want %v", a, c.cur, got, c.changed)
		}
	}
}

func TestDocumentRoundTrip(t *testing.T) {
	r := Report{Target: "h", Addr: "10.0.0.2", Proto: UDP, MaxHops: 30, Probes: 2, Started: time.Unix(100, 0).UTC(), Ended: time.Unix(101, 0).UTC(),
		Reached: true, Hops: []Hop{{TTL: 1, Addr: "10.0.0.1", RTTs: []float64{0.5, math.NaN()}}, {TTL: 2, Addr: "10.0.0.2", RTTs: []float64{1, 2}, Reached: true}}}
	b, err := json.Marshal(Document{Trace: &r})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"rtts_ms":[0.5,null]`) {
		t.Fatalf("a lost probe is not null: %s", b)
	}
	d, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	got := d.Trace
	if got == nil || !slices.Equal(got.Path(), r.Path()) || !got.Reached || !math.IsNaN(got.Hops[0].RTTs[1]) || got.Hops[1].RTTs[1] != 2 {
		t.Fatalf("read back %+v", got)
	}
	for _, bad := range []string{`{}`, `{"start":{}}`, `[`, ``} {
		if IsDocument([]byte(bad)) {
			t.Errorf("%q read as a trace document", bad)
		}
	}
}

func TestWriteText(t *testing.T) {
	r := Report{Target: "h", Addr: "10.0.0.2", Proto: ICMP, MaxHops: 5, Probes: 2,
		Hops: []Hop{{TTL: 1, RTTs: []float64{math.NaN(), math.NaN()}}, {TTL: 2, Addr: "10.0.0.2", RTTs: []float64{1.25, math.NaN()}, Reached: true}}}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "trace to h (10.0.0.2), 5 hops max, 2 icmp probes\n 1  *  *  *\n 2  10.0.0.2  1.250 ms  *\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestConfigCheck(t *testing.T) {
	if err := DefaultConfig().Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Config{
		{Proto: "tcp", MaxHops: 1, Probes: 1, ProbeTimeout: time.Second},
		{Proto: UDP, MaxHops: 0, Probes: 1, ProbeTimeout: time.Second},
		{Proto: UDP, MaxHops: 65, Probes: 1, ProbeTimeout: time.Second},
		{Proto: UDP, MaxHops: 1, Probes: 11, ProbeTimeout: time.Second},
		{Proto: UDP, MaxHops: 1, Probes: 1},
	} {
		if err := c.Check(); err == nil {
			t.Errorf("%+v passed", c)
		}
	}
	c := DefaultConfig()
	if c.Bound() != 30*time.Second {
		t.Fatalf("bound %v", c.Bound())
	}
	c.Total = 5 * time.Second
	if c.Bound() != 5*time.Second {
		t.Fatalf("bound with a total %v", c.Bound())
	}
}

// A trace's probes go at most MaxProbeRate a second: the pacer asks to
// sleep whatever the next probe is early by, on an injected clock.
func TestProbesArePaced(t *testing.T) {
	now := time.Date(2026, 12, 6, 16, 0, 0, 0, time.UTC)
	var slept time.Duration
	p := &pacer{gap: time.Second / MaxProbeRate, now: func() time.Time { return now },
		sleep: func(_ context.Context, d time.Duration) error { slept += d; now = now.Add(d); return nil }}
	for range 550 { // 64 hops × 10 probes would be 640; the attack's 550
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if want := 549 * time.Second / MaxProbeRate; slept != want {
		t.Fatalf("slept %v for 550 probes at once, want %v", slept, want)
	}
	// Probes already spaced wider go at once.
	slept = 0
	for range 10 {
		now = now.Add(time.Second)
		p.wait(context.Background())
	}
	if slept != 0 {
		t.Fatalf("slept %v between probes a second apart", slept)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.sleep = sleepCtx
	if err := p.wait(ctx); err != context.Canceled {
		t.Fatalf("a cancelled trace waits: %v", err)
	}
}
