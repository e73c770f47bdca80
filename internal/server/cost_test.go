package server

import (
	"net"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// heapObjects is the heap the last collection found live (runtime/metrics),
// the server's memory when it runs in this process.
func heapObjects() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// startKeyed starts a test as a hostile client would, with a key, and
// keeps its control connection read (the server's rows are dropped,
// and counted in rows) and its data connections fed a trickle of 1,250
// bytes per stream each second, until stop is closed or budget bytes
// were sent.
func startKeyed(t *testing.T, ts *testServer, cred auth.Credential, s spec.Spec, stop <-chan struct{}, wg *sync.WaitGroup, rows *atomic.Int64) {
	t.Helper()
	c, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rc := &rawClient{ctl: c.(*net.TCPConn)}
	t.Cleanup(rc.close)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := proto.WriteGreeting(c, proto.MagicControl); err != nil {
		t.Fatal(err)
	}
	flags, err := proto.ReadGreeting(c, proto.MagicServer)
	if err != nil {
		t.Fatal(err)
	}
	if flags&proto.FlagAuth != 0 {
		var ch proto.Challenge
		readFrameOf(t, c, proto.TypeChallenge, &ch)
		nonce, _ := auth.Nonce()
		if err := proto.WriteFrame(c, proto.TypeAuth, proto.Auth{User: cred.User, Nonce: nonce, MAC: auth.ClientProof(cred.Key, ch.Nonce, nonce, cred.User)}); err != nil {
			t.Fatal(err)
		}
		var ok proto.AuthOK
		readFrameOf(t, c, proto.TypeAuthOK, &ok)
	}
	rc.startTest(t, ts, s)
	wg.Add(2)
	go func() { // the server's rows, read and dropped
		defer wg.Done()
		for {
			f, err := proto.ReadFrame(c)
			if err != nil {
				return
			}
			if f.Type == proto.TypeInterval {
				rows.Add(1)
			}
		}
	}()
	go func() { // -b 10k: 1,250 bytes a second on each stream, for at most a minute
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		block := make([]byte, 1250)
		for range 60 {
			for _, dc := range rc.data {
				_ = dc.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = dc.Write(block)
			}
			select {
			case <-stop:
				rc.close()
				return
			case <-tick.C:
			}
		}
	}()
}

// Issue 34's attack: two clients with -P 128 -i 0.01 -b 10k -t 86400
// took a server from 24 to 354 MB in 20 s, as it kept every row of every
// stream. The server now keeps flowrun.ServerStreamRows of a test (512
// rows of -P 128, joined as the test goes on): once a test has cut them
// (5.1 s at -i 0.01) its memory is fixed. The clients hold keys, as
// strangers may not go below -i 0.1 (TestKeylessShortIntervalRefused), and
// use iperf3's 128 KiB blocks: 32 MiB of the server's heap are their
// buffers, which admission charges.
//
// The heap's floor is taken once the rows reached the cap (for 2 s
// from 100 rows past it, about 6-8 s) and 700 rows later (about 13-15
// s), counted in the rows each client got, one a cut: a server that
// cuts late under load (a CI race pass beside four CPU hogs) reaches the
// cap later than the clock says, and a window fixed in time then took
// rows still growing to it for a leak. Keeping every row, it grew 22 MB
// between the two
// (58.7 to 80.8 MB above idle, peak 86 MB; at -l 1M, 304 to 346 MB);
// now it must grow less than 5 MB (measured: 47.2 to 47.6 MB, peak 53
// MB), stay within 100 MB of the idle server throughout, and a third
// client must still be served.
func TestLongShortIntervalTestsCostFixedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 s test of the server's memory")
	}
	keys := testKeys()
	cred := auth.Credential{User: "alice", Key: keys["alice"]}
	ts := startServer(t, func(c *Config) { c.Keys = keys })
	idle := heapObjects()
	s := spec.Default()
	s.Streams, s.Interval, s.Duration, s.Rate, s.Length = 128, 10*time.Millisecond, 24*time.Hour, 10e3, 128<<10
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	var rows [2]atomic.Int64
	for i := range 2 {
		startKeyed(t, ts, cred, s, stop, &wg, &rows[i])
	}
	waitFor(t, func() bool { return ts.Stats().Running == 2 })
	began := time.Now()
	capRows := int64(flowrun.ServerStreamRows / s.Streams) // a test's rows at the cap, one a cut
	fewest := func() int64 { return min(rows[0].Load(), rows[1].Load()) }
	var peak int64
	// sample is the heap's floor and peak from when both clients got
	// from rows until they got to rows: what the server holds, without
	// the rows and frames in flight when a sample is taken.
	sample := func(from, to int64) (low int64) {
		low = 1 << 62
		deadline := time.Now().Add(90 * time.Second)
		for fewest() < to {
			if time.Now().After(deadline) {
				t.Fatalf("the clients got %d and %d rows in %v, waiting for %d", rows[0].Load(), rows[1].Load(), time.Since(began), to)
			}
			time.Sleep(250 * time.Millisecond) // bounded poll: sampling the heap as the rows come, until the deadline above
			h := heapObjects() - idle
			peak = max(peak, h)
			if fewest() >= from {
				low = min(low, h)
			}
		}
		return low
	}
	sample(0, capRows+100)
	atCap := sample(capRows+100, capRows+300)
	at1 := time.Since(began)
	sample(capRows+300, capRows+800)
	end := sample(capRows+800, capRows+1000)
	at2 := time.Since(began)
	t.Logf("server heap above idle: %.1f MB at rows %d-%d (to %.1f s), %.1f MB at rows %d-%d (to %.1f s), peak %.1f MB",
		float64(atCap)/1e6, capRows+100, capRows+300, at1.Seconds(), float64(end)/1e6, capRows+800, capRows+1000, at2.Seconds(), float64(peak)/1e6)
	if peak > 100e6 {
		t.Errorf("server heap peaked %.1f MB above idle, want under 100 MB", float64(peak)/1e6)
	}
	if grew := end - atCap; grew > 5e6 {
		t.Errorf("server heap grew %.1f MB over 700 rows once at the cap, want under 5 MB: a test's memory must be fixed", float64(grew)/1e6)
	}
	third := spec.Default()
	third.Duration, third.Interval = 500*time.Millisecond, 100*time.Millisecond
	if _, err := runWith(ts, third, func(c *session.ClientConfig) { c.Auth = &cred }); err != nil {
		t.Fatalf("a third client was not served: %v", err)
	}
}

// A client without a key is refused below -i 0.1, with the reason; with
// a key it may go to -i 0.01.
func TestKeylessShortIntervalRefused(t *testing.T) {
	ts := startServer(t, nil)
	s := quickSpec()
	s.Interval = 10 * time.Millisecond
	_, err := ts.run(t, s)
	if err == nil || !strings.Contains(err.Error(), "server refuses -i 10ms from a client without a key: its shortest is 100ms (--min-keyless-interval)") {
		t.Fatalf("keyless -i 0.01: err = %v, want the floor", err)
	}
	s.Interval = 100 * time.Millisecond
	mustRun(t, ts, s)

	keys := testKeys()
	keyed := startServer(t, func(c *Config) { c.Keys = keys })
	s.Interval = 10 * time.Millisecond
	if _, err := runWith(keyed, s, func(c *session.ClientConfig) { c.Auth = &auth.Credential{User: "bob", Key: keys["bob"]} }); err != nil {
		t.Fatalf("keyed -i 0.01: %v", err)
	}
}
