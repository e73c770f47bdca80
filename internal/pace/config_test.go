package pace

import (
	"testing"
	"time"
)

func TestScheduleArithmetic(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want Config
	}{
		// 1 Gbit/s of 1250-byte datagrams: 10 µs each.
		{"rate", ForRate(1e9, 1250, 1), Config{Interval: 10 * time.Microsecond, Burst: 1}},
		{"rate with burst", ForRate(1e9, 1250, 4), Config{Interval: 40 * time.Microsecond, Burst: 4}},
		// iperf's default 1 Mbit/s of 1448 bytes: 11.584 ms.
		{"iperf default", ForRate(1e6, 1448, 0), Config{Interval: 11584 * time.Microsecond, Burst: 1}},
		// 10 Gbit/s of 1448 bytes: 1158.4 ns rounds to 1158.
		{"rounded", ForRate(10e9, 1448, 1), Config{Interval: 1158, Burst: 1}},
		{"rounded up", ForRate(10e9, 1449, 1), Config{Interval: 1159, Burst: 1}}, // 1159.2
		{"tiny interval stays positive", ForRate(1e18, 1, 1), Config{Interval: 1, Burst: 1}},
		{"zero rate: unpaced", ForRate(0, 1448, 1), Config{Burst: 1}},
		{"negative rate: unpaced", ForRate(-5, 1448, 2), Config{Burst: 2}},
		{"pps", ForPPS(100_000, 1), Config{Interval: 10 * time.Microsecond, Burst: 1}},
		{"pps with burst", ForPPS(3, 2), Config{Interval: 666_666_667, Burst: 2}},
		{"zero pps: unpaced", ForPPS(0, 0), Config{Burst: 1}},
		{"spacing", ForSpacing(25 * time.Microsecond), Config{Interval: 25 * time.Microsecond, Burst: 1, Spacing: true}},
		{"negative spacing: unpaced", ForSpacing(-1), Config{Burst: 1, Spacing: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg != tt.want {
				t.Fatalf("got %+v, want %+v", tt.cfg, tt.want)
			}
		})
	}
}
