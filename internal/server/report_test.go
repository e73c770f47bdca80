package server

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// Tests that run at once get reports of their own: distinct IDs, each
// line prefixed with its test's ID and client, a test's lines together.
func TestConcurrentTestsReportedApart(t *testing.T) {
	var out syncbuf.Buffer
	rep := &emit.ServerReport{W: &out, Interval: 250 * time.Millisecond}
	var mu sync.Mutex
	var finished []Finished
	ts := startServer(t, func(c *Config) {
		c.OnTest = func(f Finished) {
			mu.Lock()
			finished = append(finished, f)
			mu.Unlock()
			if err := rep.Write(fmt.Sprintf("t%d", f.ID), f.Peer.String(), f.Result); err != nil {
				t.Error(err)
			}
		}
	})
	const n = 3
	s := quickSpec()
	s.Duration = 500 * time.Millisecond
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ts.run(t, s); err != nil {
				t.Errorf("test failed: %v", err)
			}
		}()
	}
	wg.Wait()
	// The client returns once it has its end report; the server records
	// the test right after. Bounded poll: there is no event to wait on
	// from here.
	for deadline := time.Now().Add(10 * time.Second); ; {
		mu.Lock()
		got := len(finished)
		mu.Unlock()
		if got == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond) // bounded poll: the server records a test just after its client returns
	}
	mu.Lock()
	defer mu.Unlock()
	if len(finished) != n {
		t.Fatalf("%d tests reported, want %d", len(finished), n)
	}
	prefixes := map[string]bool{}
	for _, f := range finished {
		prefixes[fmt.Sprintf("[t%d %s] ", f.ID, f.Peer)] = true
	}
	if len(prefixes) != n {
		t.Fatalf("the %d tests share prefixes: %v", n, prefixes)
	}
	// Each test's lines come in one run: a prefix seen, left and seen
	// again would be reports interleaved line by line.
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	done := map[string]bool{}
	current := ""
	byTest := map[string][]string{}
	linePrefix := regexp.MustCompile(`^\[t\d+ [^\]]+\] `)
	for _, l := range lines {
		p := linePrefix.FindString(l)
		if !prefixes[p] {
			t.Fatalf("line without a test's prefix: %q", l)
		}
		if p != current {
			if done[p] {
				t.Fatalf("the report of %q is split by another's", p)
			}
			done[current], current = true, p
		}
		byTest[p] = append(byTest[p], strings.TrimPrefix(l, p))
	}
	rowRe := regexp.MustCompile(`^\[  1\]\s+\d+\.\d\d-\d+\.\d\d\s+sec\s+\S+ \S*Bytes\s+\S+ \S*bits/sec`)
	for p, ls := range byTest {
		body := strings.Join(ls, "\n")
		if !strings.HasPrefix(ls[0], "Accepted connection from 127.0.0.1") {
			t.Errorf("%s: first line %q", p, ls[0])
		}
		rows := 0
		for _, l := range ls {
			if rowRe.MatchString(l) {
				rows++
			}
		}
		if rows < 2 {
			t.Errorf("%s: %d interval rows of the server's, want at least 2 (a full one and the tail) over 0.5 s at -i 0.25s:\n%s", p, rows, body)
		}
		for _, want := range []string{"[ ID] Interval           Transfer     Bitrate", "  sender", "  receiver"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: no %q in:\n%s", p, want, body)
			}
		}
	}
}
