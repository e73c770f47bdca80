package auth

import (
	"fmt"
	"testing"
	"time"
)

func TestFailureLimiter(t *testing.T) {
	l := &FailureLimiter{Burst: 3, Rate: 2, MaxSources: 2}
	t0 := time.Unix(1000, 0)
	if !l.Allow("a", t0) {
		t.Fatal("a new source is refused")
	}
	// Three failures at once empty the bucket; the first is worth a line.
	for i := 0; i < 3; i++ {
		if first := l.Fail("a", t0); first != (i == 0) {
			t.Fatalf("failure %d: first=%v", i, first)
		}
	}
	if l.Allow("a", t0) {
		t.Fatal("an empty bucket allows")
	}
	if !l.Allow("b", t0) {
		t.Fatal("another source is slowed")
	}
	// Half a second refills one try at 2 a second.
	if l.Allow("a", t0.Add(499*time.Millisecond)) {
		t.Fatal("refilled too early")
	}
	if !l.Allow("a", t0.Add(500*time.Millisecond)) {
		t.Fatal("not refilled after 0.5 s")
	}
	l.Fail("a", t0.Add(500*time.Millisecond))
	if l.Allow("a", t0.Add(600*time.Millisecond)) {
		t.Fatal("allowed again before the next refill")
	}
	// Steady state: at most Rate tries a second get through.
	tries := 0
	for ms := 1000; ms < 11000; ms += 10 {
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		if l.Allow("a", now) {
			tries++
			l.Fail("a", now)
		}
	}
	if tries > 21 || tries < 19 {
		t.Fatalf("%d tries in 10 s at 2/s", tries)
	}
	s := l.Summary()
	if len(s) != 1 || s[0].Source != "a" || s[0].Failed != 4+tries || s[0].Refused == 0 {
		t.Fatalf("summary %+v", s)
	}
	if len(l.Summary()) != 0 {
		t.Fatal("a summary does not start counting anew")
	}
	// The table is bounded: a third source forgets the quietest.
	l.Fail("b", t0.Add(11*time.Second))
	l.Fail("c", t0.Add(12*time.Second))
	if len(l.sources) > 2 {
		t.Fatalf("%d sources kept, max 2", len(l.sources))
	}
}

func TestFailureLimiterBoundsAFlood(t *testing.T) {
	l := NewFailureLimiter()
	now := time.Unix(0, 0)
	for i := 0; i < 3*DefaultMaxSources; i++ {
		l.Fail(fmt.Sprint("src", i), now)
	}
	if len(l.sources) > DefaultMaxSources {
		t.Fatalf("%d sources kept", len(l.sources))
	}
}
