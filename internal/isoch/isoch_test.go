package isoch

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestSizer(t *testing.T) {
	z := NewSizer(Frames{FPS: 60, Mean: 20e6, RNGState: 1})
	if n := z.Next(0); n != 41666 {
		t.Errorf("a fixed size: %d bytes, want %d", n, 41666)
	}
	if n := z.Next(1 << 20); n != 1<<20 {
		t.Errorf("the minimum: %d", n)
	}
	z = NewSizer(Frames{FPS: 10, Mean: 8e6, Stdev: 4e6, RNGState: 7})
	var sum, sq float64
	const n = 20000
	for range n {
		v := float64(z.Next(0)) * 8 * 10 // back to bits a second
		sum += v
		sq += v * v
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-8e6)/8e6 > 0.03 || math.Abs(sd-4e6)/4e6 > 0.1 {
		t.Errorf("log-normal draw: mean %.0f sd %.0f, want 8e6 and 4e6", mean, sd)
	}
}

func TestParse(t *testing.T) {
	f, err := Parse("60:20m,5m")
	if err != nil || f.FPS != 60 || f.Mean != 20e6 || f.Stdev != 5e6 {
		t.Fatalf("60:20m,5m: %+v %v", f, err)
	}
	for _, bad := range []string{"60", "x:20m", "60:20M", "0:20m", "60:0", "60:20m,-1m", "20000:1m"} {
		if _, err := Parse(bad); err == nil || !strings.HasPrefix(err.Error(), "--isochronous "+bad+":") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if _, err := IPGOf(1001); err == nil {
		t.Error("--ipg 1001 accepted")
	}
	if d, err := IPGOf(0.5); err != nil || d != 500*time.Microsecond {
		t.Errorf("--ipg 0.5: %v %v", d, err)
	}
}

func TestDueAndSlip(t *testing.T) {
	f := Frames{FPS: 60, Mean: 1e6}
	t0 := time.Unix(1_800_000_000, 0)
	if d := f.Due(t0, 60).Sub(t0); d != time.Second {
		t.Errorf("frame 60 due after %v, want 1s", d)
	}
	if next, skipped := f.Slip(t0, t0.Add(10*time.Millisecond), 0); next != 0 || skipped != 0 {
		t.Errorf("10 ms late at 60 fps: next %d, skipped %d", next, skipped)
	}
	if next, skipped := f.Slip(t0, t0.Add(50*time.Millisecond), 0); next != 3 || skipped != 3 {
		t.Errorf("50 ms late at 60 fps: next %d, skipped %d; want 3 and 3", next, skipped)
	}
}
