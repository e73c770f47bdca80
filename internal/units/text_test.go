package units

import (
	"math"
	"testing"
	"time"
)

func TestSizeString(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{1500, "1500"},
		{64000, "64k"},
		{131072, "128K"},
		{512 << 20, "512M"},
		{8 << 20, "8M"},
		{1000000, "1m"},
		{1024000, "1000K"}, // as short as "1024k": binary wins the tie
		{3 << 40, "3T"},
		{math.MaxInt64, "9223372036854775807"},
	}
	for _, tt := range tests {
		got := SizeString(tt.n)
		if got != tt.want {
			t.Errorf("SizeString(%d) = %q; want %q", tt.n, got, tt.want)
		}
		if back, err := ParseSize(got); err != nil || back != tt.n {
			t.Errorf("ParseSize(SizeString(%d) = %q) = %d, %v", tt.n, got, back, err)
		}
	}
}

func TestRateString(t *testing.T) {
	tests := []struct {
		bps  float64
		want string
	}{
		{0, "0"},
		{1e9, "1g"},
		{622e6, "622m"},
		{100e6, "100m"},
		{1 << 30, "1073741824"}, // no suffix reads as a power of 1024
		{1.5e9, "1500m"},
		{2.5, "2.5"},
		{1e15, "1000t"},
	}
	for _, tt := range tests {
		got := RateString(tt.bps)
		if got != tt.want {
			t.Errorf("RateString(%v) = %q; want %q", tt.bps, got, tt.want)
		}
		if back, err := ParseRate(got); err != nil || back != tt.bps {
			t.Errorf("ParseRate(RateString(%v) = %q) = %v, %v", tt.bps, got, back, err)
		}
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{10 * time.Second, "10s"}, // not "1": the text is never cut short
		{time.Second, "1s"},
		{500 * time.Millisecond, "500ms"},
		{12 * time.Microsecond, "12µs"},
		{90 * time.Second, "1m30s"},
		{30 * time.Minute, "30m"},
		{24 * time.Hour, "24h"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{time.Hour + 30*time.Minute, "1h30m"},
		{1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		got := DurationString(tt.d)
		if got != tt.want {
			t.Errorf("DurationString(%v) = %q; want %q", tt.d, got, tt.want)
		}
		if back, err := ParseDuration(got); err != nil || back != tt.d {
			t.Errorf("ParseDuration(DurationString(%v) = %q) = %v, %v", tt.d, got, back, err)
		}
	}
}
