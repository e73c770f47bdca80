package server

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"

	"github.com/wireperf/wireperf/internal/result"
)

// liveLog records what a test's live observer saw, and when.
type liveLog struct {
	mu        sync.Mutex
	ids       []int64
	started   int
	intervals []time.Time
	local     string // the Started result's local role
}

func (l *liveLog) Started(r *result.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started++
	l.local = r.Local.Role
}

func (l *liveLog) Interval(r *result.Result, row result.IntervalRow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(row.Flows) > 0 {
		l.intervals = append(l.intervals, time.Now())
	}
}

// Native and iperf3 tests show the server's rows as they run, numbered
// as their Finished will be, with the server's end as Local.
func TestLiveObserver(t *testing.T) {
	var log liveLog
	var finished []int64
	var mu sync.Mutex
	ts := startServer(t, func(c *Config) {
		c.Live = func(id int64, _ net.Addr) result.Observer {
			log.mu.Lock()
			log.ids = append(log.ids, id)
			log.mu.Unlock()
			return &log
		}
		c.OnTest = func(f Finished) { mu.Lock(); finished = append(finished, f.ID); mu.Unlock() }
	})
	s := quickSpec()
	s.Duration = 2 * time.Second
	s.Interval = 500 * time.Millisecond
	mustRun(t, ts, s)
	ended := time.Now()
	log.mu.Lock()
	if log.started != 1 || log.local != result.RoleServer {
		t.Errorf("native: Started %d times, local role %q; want once, server", log.started, log.local)
	}
	if len(log.intervals) < 3 || !log.intervals[0].Before(ended.Add(-time.Second)) {
		t.Errorf("native: %d live rows (times %v, end %v); want rows from the start", len(log.intervals), log.intervals, ended)
	}
	log.intervals = nil
	log.mu.Unlock()

	iperf3Client(t, iperf3bin.Need(t), ts, "-t", "2")
	ended = time.Now()
	log.mu.Lock()
	defer log.mu.Unlock()
	if log.started != 2 || len(log.intervals) < 2 || !log.intervals[0].Before(ended.Add(-500*time.Millisecond)) {
		t.Errorf("iperf3: Started %d times in all, %d live rows; want a second start and rows before the end", log.started, len(log.intervals))
	}
	// The server records a test right after its client returns. Bounded
	// poll: there is no event to wait on from here.
	for deadline := time.Now().Add(5 * time.Second); ; {
		mu.Lock()
		n := len(finished)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // bounded poll, as said above
	}
	mu.Lock()
	defer mu.Unlock()
	if len(log.ids) != 2 || len(finished) != 2 || log.ids[0] != finished[0] || log.ids[1] != finished[1] {
		t.Errorf("live IDs %v, finished IDs %v; want the same numbers", log.ids, finished)
	}
}
