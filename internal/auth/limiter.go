package auth

import (
	"sort"
	"sync"
	"time"
)

// FailureLimiter slows guessing: each source (a client prefix) has a
// bucket of Burst failed authentications that refills at Rate per
// second; a source whose bucket is empty is turned away before it is
// read, until the bucket refills. A right key costs nothing. The table
// holds at most MaxSources sources (the longest quiet is forgotten
// first), so a flood of addresses can't grow it. Every method takes the
// instant, so the rule is tested exactly.
type FailureLimiter struct {
	Burst      float64
	Rate       float64 // failures per second, refilled
	MaxSources int

	mu      sync.Mutex
	sources map[string]*bucket
	// refused and failed count per source since the last Summary.
	refused, failed map[string]int
}

type bucket struct {
	tokens float64
	at     time.Time
}

// Defaults: a source may fail 10 times at once, then twice a second.
const (
	DefaultFailureBurst = 10
	DefaultFailureRate  = 2
	DefaultMaxSources   = 4096
)

// NewFailureLimiter has the defaults.
func NewFailureLimiter() *FailureLimiter {
	return &FailureLimiter{Burst: DefaultFailureBurst, Rate: DefaultFailureRate, MaxSources: DefaultMaxSources}
}

func (l *FailureLimiter) fill(src string, now time.Time) *bucket {
	if l.sources == nil {
		l.sources, l.refused, l.failed = map[string]*bucket{}, map[string]int{}, map[string]int{}
	}
	b := l.sources[src]
	if b == nil {
		return nil
	}
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = min(l.Burst, b.tokens+dt*l.Rate)
		b.at = now
	}
	if b.tokens >= l.Burst {
		delete(l.sources, src) // full again: nothing to remember
		return nil
	}
	return b
}

// Allow says whether a connection from src may try to authenticate at
// now: false while its failures have emptied its bucket.
func (l *FailureLimiter) Allow(src string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.fill(src, now)
	if b == nil || b.tokens >= 1 {
		return true
	}
	l.refused[l.counted(l.refused, src)]++
	return false
}

// counted is the key src is counted under until the next Summary: its
// own, or "(others)" once MaxSources sources are counted.
func (l *FailureLimiter) counted(m map[string]int, src string) string {
	if _, ok := m[src]; ok || l.MaxSources <= 0 || len(m) < l.MaxSources {
		return src
	}
	return "(others)"
}

// Fail records a failed authentication from src at now. first says
// whether it is the source's first failure since the last Summary, the
// one worth a log line of its own.
func (l *FailureLimiter) Fail(src string, now time.Time) (first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.fill(src, now)
	if b == nil {
		if len(l.sources) >= l.MaxSources && l.MaxSources > 0 {
			l.forgetQuietest()
		}
		b = &bucket{tokens: l.Burst, at: now}
		l.sources[src] = b
	}
	b.tokens = max(0, b.tokens-1)
	key := l.counted(l.failed, src)
	l.failed[key]++
	return l.failed[key] == 1
}

func (l *FailureLimiter) forgetQuietest() {
	var oldest string
	var at time.Time
	for src, b := range l.sources {
		if oldest == "" || b.at.Before(at) {
			oldest, at = src, b.at
		}
	}
	delete(l.sources, oldest)
}

// SourceCount is one source's failures and refusals in a Summary.
type SourceCount struct {
	Source          string
	Failed, Refused int
}

// Summary is the failures and refusals per source since the last
// Summary, most failures first, and starts counting anew: what a
// periodic log line says instead of a line per try.
func (l *FailureLimiter) Summary() []SourceCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]*SourceCount{}
	for src, n := range l.failed {
		seen[src] = &SourceCount{Source: src, Failed: n}
	}
	for src, n := range l.refused {
		if seen[src] == nil {
			seen[src] = &SourceCount{Source: src}
		}
		seen[src].Refused = n
	}
	out := make([]SourceCount, 0, len(seen))
	for _, c := range seen {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Failed+out[i].Refused != out[j].Failed+out[j].Refused {
			return out[i].Failed+out[i].Refused > out[j].Failed+out[j].Refused
		}
		return out[i].Source < out[j].Source
	})
	l.failed, l.refused = map[string]int{}, map[string]int{}
	return out
}
