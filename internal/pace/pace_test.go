package pace

import (
	"testing"
	"time"
)

// runResult is what runSchedule saw: the Sent times (ns since start) and
// the skips the Wait after the stall made, with the bounds the skip rule
// puts on them.
type runResult struct {
	sent               []int64
	stallSkips, lo, hi int64
	pacer              *Pacer
}

// runSchedule paces n slots, calling Sent with the time right after Wait
// returns, and runs stall (if set) after slot stallAt.
func runSchedule(t *testing.T, iv time.Duration, n, stallAt int, stall func()) runResult {
	t.Helper()
	cfg := ForSpacing(iv)
	cfg.Spin = true // the bounds below are the spinning pacer's
	p := New(cfg)
	start := time.Now()
	p.Start(start)
	var r runResult
	r.pacer = p
	for i := 0; i < n; i++ {
		var before, w0, due int64
		if i == stallAt+1 {
			before, due = p.Skipped(), p.next*int64(iv)
			w0 = int64(time.Since(start))
		}
		if _, ok := p.Wait(nil); !ok {
			t.Fatal("Wait returned !ok without stop")
		}
		now := time.Now()
		p.Sent(now)
		r.sent = append(r.sent, int64(now.Sub(start)))
		if i == stallAt+1 {
			// The skip rule: slot k goes only if now <= due(k) + iv, so
			// the skips lie between those implied by the time Wait was
			// called and the time it returned.
			skips := func(now int64) int64 { return max(0, (now-due-int64(iv)+int64(iv)-1)/int64(iv)) }
			r.stallSkips, r.lo, r.hi = p.Skipped()-before, skips(w0), skips(r.sent[i])
		}
		if i == stallAt && stall != nil {
			stall()
		}
	}
	return r
}

func spinFor(d time.Duration) func() {
	return func() {
		for t := time.Now(); time.Since(t) < d; {
		}
	}
}

// TestPacing holds 2,000 slots and checks the error and the never-burst
// rule. The error bounds are generous (the machine may be loaded); the
// real figures are logged.
func TestPacing(t *testing.T) {
	tests := []struct {
		name      string
		interval  time.Duration
		stall     func()
		wantSkips int64 // from the stall, roughly
		maxP50    time.Duration
	}{
		{"100 µs", 100 * time.Microsecond, nil, 0, 20 * time.Microsecond},
		{"10 µs", 10 * time.Microsecond, nil, 0, 5 * time.Microsecond},
		{"100 µs, 5 ms stall (sleep)", 100 * time.Microsecond, func() { time.Sleep(5 * time.Millisecond) }, 50, 20 * time.Microsecond}, // load generator: a 5 ms stall of the pacer's goroutine, the case under test
		{"100 µs, 5 ms stall (busy)", 100 * time.Microsecond, spinFor(5 * time.Millisecond), 50, 20 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n, stallAt = 2000, 1000
			r := runSchedule(t, tt.interval, n, stallAt, tt.stall)
			sp := r.pacer.Spacing()
			t.Logf("error p50 %.0f ns, p99 %.0f ns, max %.0f ns; mean gap %.0f ns; skipped %d (stall %d)",
				sp.ErrP50Ns, sp.ErrP99Ns, sp.ErrMaxNs, sp.MeanNs, r.pacer.Skipped(), r.stallSkips)
			if sp.Samples != n || sp.TargetNs != int64(tt.interval) {
				t.Fatalf("samples %d target %d", sp.Samples, sp.TargetNs)
			}
			if sp.ErrP50Ns > float64(tt.maxP50) {
				t.Errorf("p50 error %.0f ns > %v", sp.ErrP50Ns, tt.maxP50)
			}
			// Never bursts: consecutive sends are at least half an interval
			// apart, stall or not.
			iv := int64(tt.interval)
			for i := 1; i < len(r.sent); i++ {
				if gap := r.sent[i] - r.sent[i-1]; gap < iv/2 {
					t.Fatalf("sends %d and %d only %d ns apart", i-1, i, gap)
				}
			}
			// Every slot of the elapsed schedule was either sent or skipped.
			slots := r.pacer.next
			if slots != n+r.pacer.Skipped() {
				t.Errorf("slots %d != sent %d + skipped %d", slots, n, r.pacer.Skipped())
			}
			if tt.stall == nil {
				return
			}
			if r.stallSkips < r.lo || r.stallSkips > r.hi {
				t.Errorf("stall skipped %d slots, the rule allows %d..%d", r.stallSkips, r.lo, r.hi)
			}
			// At least 5 ms passed since slot stallAt: of the 50 slots due
			// since, the last one or two are within a slot of now and go;
			// more are skipped if the stall overran, as the bounds say.
			if r.stallSkips < tt.wantSkips-2 {
				t.Errorf("stall skipped %d slots, want at least %d", r.stallSkips, tt.wantSkips-2)
			}
			if r.pacer.Skipped() < r.stallSkips {
				t.Errorf("Skipped() %d < the stall's %d", r.pacer.Skipped(), r.stallSkips)
			}
		})
	}
}

// TestWaitStop checks that closing stop ends Wait, whether it is about to
// wait, sleeping, or spinning.
func TestWaitStop(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		closeAt string // "before", "sleep", "spin"
	}{
		{"closed before", Config{Interval: time.Hour}, "before"},
		{"while sleeping", Config{Interval: time.Hour}, "sleep"},
		{"while spinning", Config{Interval: time.Second, Spin: true, SpinThreshold: time.Hour}, "spin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.cfg)
			p.Start(time.Now())
			if _, ok := p.Wait(nil); !ok { // slot 0 is due at once
				t.Fatal("slot 0 not released")
			}
			stop := make(chan struct{})
			phase := make(chan bool, 1)
			p.w.entered = func(sleeping bool) {
				select {
				case phase <- sleeping:
				default:
				}
			}
			if tt.closeAt == "before" {
				close(stop)
			}
			res := make(chan bool)
			go func() {
				_, ok := p.Wait(stop)
				res <- ok
			}()
			if tt.closeAt != "before" {
				if sleeping := <-phase; sleeping != (tt.closeAt == "sleep") {
					t.Fatalf("wait entered sleeping=%v", sleeping)
				}
				close(stop)
			}
			select {
			case ok := <-res:
				if ok {
					t.Fatal("Wait returned ok after stop")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Wait did not return after stop")
			}
		})
	}
}

func TestUnpaced(t *testing.T) {
	p := New(ForRate(0, 1448, 1))
	p.Start(time.Now())
	var last time.Time
	for range 100 {
		slot, ok := p.Wait(nil)
		if !ok || slot.Before(last) {
			t.Fatalf("unpaced Wait: %v %v", slot, ok)
		}
		last = slot
		p.Sent(time.Now())
	}
	if sp := p.Spacing(); sp.Samples != 100 || sp.TargetNs != 0 || p.Skipped() != 0 {
		t.Fatalf("unpaced: %+v, skipped %d", sp, p.Skipped())
	}
}

// TestSpacingFigures checks the summary arithmetic on known send times.
func TestSpacingFigures(t *testing.T) {
	tests := []struct {
		name     string
		slots    []int64 // scheduled ns
		sent     []int64 // actual ns
		wantMean float64
		wantP50  float64
		wantP99  float64
		wantMax  float64
		gapP99   float64
		held     bool
	}{
		{"none", nil, nil, 0, 0, 0, 0, 0, true},
		{"one", []int64{0}, []int64{300}, 0, 300, 300, 300, 0, true},
		{"early and late", []int64{0, 1000, 2000, 3000}, []int64{10, 980, 2030, 3000}, 2990.0 / 3, 10, 30, 30, 1050, true},
		// Skipped slots keep every error at 0, yet the sender held a
		// 2.5 µs spacing, not 1 µs: the gaps and the mean say so.
		{"skips stretch the mean", []int64{0, 1000, 5000}, []int64{0, 1000, 5000}, 2500, 0, 0, 0, 4000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(ForSpacing(1000))
			for i := range tt.slots {
				p.slotAt, p.open = tt.slots[i], true
				p.sentAt(tt.sent[i])
			}
			p.sentAt(99999) // not open: ignored
			sp := p.Spacing()
			if sp.Samples != int64(len(tt.sent)) || sp.MeanNs != tt.wantMean || sp.ErrP50Ns != tt.wantP50 || sp.ErrP99Ns != tt.wantP99 || sp.ErrMaxNs != tt.wantMax {
				t.Fatalf("got %+v", sp)
			}
			if sp.GapP99Ns != tt.gapP99 || sp.Held() != tt.held {
				t.Fatalf("gap p99 %v, held %v; want %v, %v (%+v)", sp.GapP99Ns, sp.Held(), tt.gapP99, tt.held, sp)
			}
		})
	}
}

func BenchmarkWait(b *testing.B) {
	for _, bc := range []struct {
		name string
		iv   time.Duration
	}{{"unpaced", 0}, {"1µs", time.Microsecond}, {"10µs", 10 * time.Microsecond}, {"100µs", 100 * time.Microsecond}} {
		b.Run(bc.name, func(b *testing.B) {
			p := New(ForSpacing(bc.iv))
			p.Start(time.Now())
			for b.Loop() {
				p.Wait(nil)
				p.Sent(time.Now())
			}
			sp := p.Spacing()
			b.ReportMetric(sp.ErrP50Ns, "p50-err-ns")
			b.ReportMetric(sp.ErrP99Ns, "p99-err-ns")
			b.ReportMetric(float64(p.Skipped())/float64(b.N), "skipped/op")
		})
	}
}
