package tcpinfo

import (
	"io"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// blast sends from client to server as fast as it can until stop is
// closed, and returns the bytes sent once the sender has ended. The
// server side discards.
func blast(t testing.TB, client, server *net.TCPConn, stop <-chan struct{}) (sent func() int64, done <-chan struct{}) {
	t.Helper()
	go func() { _, _ = io.Copy(io.Discard, server) }()
	var n atomic.Int64
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		buf := make([]byte, 128<<10)
		for {
			select {
			case <-stop:
				_ = client.CloseWrite()
				return
			default:
			}
			k, err := client.Write(buf)
			n.Add(int64(k))
			if err != nil {
				return
			}
		}
	}()
	return n.Load, ch
}

func TestSamplerTimeline(t *testing.T) {
	client, server := transfer(t, "")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	_, done := blast(t, client, server, stop)
	var seen atomic.Int64
	const period = 10 * time.Millisecond
	epoch := time.Now()
	enough := make(chan struct{})
	s := NewSampler(rc, SamplerConfig{Period: period, Epoch: epoch, Until: done, OnSample: func(*Sample) {
		if seen.Add(1) == 20 {
			close(enough)
		}
	}})
	s.Start()
	waitClosed(t, enough, "20 samples")
	close(stop)
	<-done
	tl := s.Stop()
	if tl.Err != nil {
		t.Fatalf("sampling error: %v", tl.Err)
	}
	n := len(tl.Samples)
	want := int(time.Since(epoch) / period)
	t.Logf("%d samples over %v (period %v), OnSample saw %d", n, time.Since(epoch).Round(time.Millisecond), tl.Period, seen.Load())
	// A loaded machine wakes the timer late and skips ticks; only more
	// samples than periods would be wrong.
	if n < min(5, want) || n > want+1 {
		t.Errorf("%d samples, want up to %d", n, want)
	}
	if int(seen.Load()) < n {
		t.Errorf("OnSample saw %d samples, fewer than the %d kept", seen.Load(), n)
	}
	if !sort.SliceIsSorted(tl.Samples, func(i, j int) bool { return tl.Samples[i].At < tl.Samples[j].At }) {
		t.Error("samples out of order")
	}
	for i := 1; i < n; i++ {
		if tl.Samples[i].At <= tl.Samples[i-1].At {
			t.Fatalf("sample %d at %v is not after sample %d at %v", i, tl.Samples[i].At, i-1, tl.Samples[i-1].At)
		}
	}
	last := tl.Samples[n-1].Info
	if last.BytesAcked == 0 || last.SndMSS == 0 {
		t.Errorf("last sample looks empty: %+v", last)
	}
	// Stop again returns the same timeline.
	if again := s.Stop(); len(again.Samples) != n {
		t.Errorf("second Stop: %d samples, want %d", len(again.Samples), n)
	}
}

func TestSamplerThinsLongTimelines(t *testing.T) {
	client, _ := transfer(t, "")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	const period = time.Millisecond
	// 40 samples fill a timeline of 16 twice over.
	var seen atomic.Int64
	enough := make(chan struct{})
	s := NewSampler(rc, SamplerConfig{Period: period, MaxSamples: 16, OnSample: func(*Sample) {
		if seen.Add(1) == 40 {
			close(enough)
		}
	}})
	s.Start()
	waitClosed(t, enough, "40 samples")
	tl := s.Stop()
	if len(tl.Samples) > 16 {
		t.Fatalf("kept %d samples, the limit is 16", len(tl.Samples))
	}
	if tl.Period <= period {
		t.Fatalf("period %v after thinning, want a multiple of %v", tl.Period, period)
	}
	// The spacing itself is TestSamplerKeepThins's: on a loaded machine
	// the loop skips ticks it woke too late for, so real gaps vary.
	for i := 1; i < len(tl.Samples); i++ {
		if tl.Samples[i].At <= tl.Samples[i-1].At {
			t.Fatalf("sample %d at %v is not after %v", i, tl.Samples[i].At, tl.Samples[i-1].At)
		}
	}
}

func TestSamplerStopsOnClosedSocket(t *testing.T) {
	client, _ := transfer(t, "")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	var once sync.Once
	s := NewSampler(rc, SamplerConfig{Period: 5 * time.Millisecond, OnSample: func(*Sample) { once.Do(func() { close(first) }) }})
	s.Start()
	waitClosed(t, first, "the first sample")
	client.Close()
	waitClosed(t, s.done, "the sampler's own stop after the close")
	tl := s.Stop()
	if tl.Err == nil {
		t.Error("no error after the socket closed")
	}
	if len(tl.Samples) == 0 {
		t.Error("no samples before the socket closed")
	}
}

func TestSamplerBBR(t *testing.T) {
	client, _ := transfer(t, "bbr")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GetBBR(rc); err != nil {
		t.Skipf("no BBR here: %v", err)
	}
	first := make(chan struct{})
	var once sync.Once
	s := NewSampler(rc, SamplerConfig{Period: 5 * time.Millisecond, OnSample: func(*Sample) { once.Do(func() { close(first) }) }})
	s.Start()
	waitClosed(t, first, "the first sample")
	tl := s.Stop()
	if len(tl.Samples) == 0 || tl.Samples[0].BBR == nil {
		t.Fatalf("samples lack BBR's state: %+v", tl.Samples)
	}
}

// BenchmarkSamplingGoodput measures loopback goodput with the timeline
// off and sampled at 100 ms, 10 ms and 1 ms, to show that sampling costs
// no measurable throughput. Loopback speed drifts by more than any effect
// sampling could have, so one connection sends all along and the
// benchmark cuts its time into windows of 200 ms, one per mode in
// rotating order each round, sampling only in that mode's window: modes
// are compared in adjacent windows of the same connection. It reports
// each mode's rate (MB/s) and its difference from "off" (%), and
// "%-off-control": two "off" windows compared the same way, the noise
// floor. Run it with -benchtime 20x or more.
func BenchmarkSamplingGoodput(b *testing.B) {
	client, server := transfer(b, "")
	rc, err := client.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	sent, done := blast(b, client, server, stop)
	defer func() { close(stop); <-done }()
	modes := []struct {
		name   string
		period time.Duration
	}{{"off", 0}, {"off-control", 0}, {"100ms", 100 * time.Millisecond}, {"10ms", 10 * time.Millisecond}, {"1ms", time.Millisecond}}
	const window = 200 * time.Millisecond
	bytes := make([]float64, len(modes))
	secs := make([]float64, len(modes))
	samples := make([]int, len(modes))
	time.Sleep(window) // load generator: blast sends through slow start before the windows are measured
	i := 0
	for b.Loop() {
		for j := range modes {
			m := (i + j) % len(modes)
			var s *Sampler
			if p := modes[m].period; p > 0 {
				s = NewSampler(rc, SamplerConfig{Period: p})
				s.Start()
			}
			n0, t0 := sent(), time.Now()
			time.Sleep(window) // load generator: one measured window of blast's sending
			n1, t1 := sent(), time.Now()
			if s != nil {
				samples[m] += len(s.Stop().Samples)
			}
			bytes[m] += float64(n1 - n0)
			secs[m] += t1.Sub(t0).Seconds()
		}
		i++
	}
	off := bytes[0] / secs[0]
	for j, m := range modes {
		r := bytes[j] / secs[j]
		b.ReportMetric(r/1e6, "MB/s-"+m.name)
		if j > 0 {
			b.ReportMetric(100*(r/off-1), "%-"+m.name)
		}
		if m.period > 0 {
			b.ReportMetric(float64(samples[j])/float64(i), "samples/window-"+m.name)
		}
	}
}

// BenchmarkSamplerCPU measures what sampling costs the process in CPU
// time, wake-ups and all: a sampler at 1 ms on an idle connection for
// about a second, divided by the samples it took. The precise answer to
// "does sampling cost throughput": a throughput-bound sender loses at most
// this share of a core.
func BenchmarkSamplerCPU(b *testing.B) {
	for _, cc := range []string{"cubic", "bbr"} {
		b.Run(cc, func(b *testing.B) { samplerCPU(b, cc) })
	}
}

func samplerCPU(b *testing.B, cc string) {
	client, _ := transfer(b, cc)
	rc, err := client.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	n := 0
	for b.Loop() {
		before := processCPU(b)
		s := NewSampler(rc, SamplerConfig{Period: time.Millisecond})
		s.Start()
		time.Sleep(time.Second) // load generator: the sampler runs for the measured second
		n += len(s.Stop().Samples)
		cpu += processCPU(b) - before
	}
	per := cpu / time.Duration(max(n, 1))
	b.ReportMetric(float64(per.Nanoseconds())/1e3, "cpu-µs/sample")
	b.ReportMetric(100*float64(per)/float64(100*time.Millisecond), "%core@100ms")
	b.ReportMetric(100*float64(per)/float64(10*time.Millisecond), "%core@10ms")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
