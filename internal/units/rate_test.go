package units

import (
	"strings"
	"testing"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"0", 0},
		{"750m", 750e6}, // -b 750m is 750,000,000 bit/s
		{"1G", 1 << 30},
		{"1g", 1e9},
		{"100k", 1e5},
		{"2.5M", 2.5 * (1 << 20)},
		{"1234", 1234},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRateBurst(t *testing.T) {
	tests := []struct {
		in        string
		rate      float64
		burst     int
		wantError string
	}{
		{in: "10M", rate: 10 << 20},
		{in: "10m/100", rate: 10e6, burst: 100},
		{in: "1g/1", rate: 1e9, burst: 1},
		{in: "1g/1000", rate: 1e9, burst: MaxBurst},
		{in: "1g/1001", wantError: `invalid burst "1001" in "1g/1001"`},
		{in: "1g/0", wantError: "from 1 to 1000"},
		{in: "1g/", wantError: `invalid burst ""`},
		{in: "1g/-5", wantError: "invalid burst"},
		{in: "1g/+5", wantError: "invalid burst"},
		{in: "1g/5/5", wantError: `invalid burst "5/5"`},
		{in: "1g/5k", wantError: "invalid burst"},
		{in: "x/5", wantError: `invalid rate "x": not a number`},
		{in: "-1m", wantError: "must not be negative"},
	}
	for _, tt := range tests {
		rate, burst, err := ParseRateBurst(tt.in)
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("ParseRateBurst(%q) error = %v; want it to contain %q", tt.in, err, tt.wantError)
			}
			continue
		}
		if err != nil || rate != tt.rate || burst != tt.burst {
			t.Errorf("ParseRateBurst(%q) = %v, %d, %v; want %v, %d", tt.in, rate, burst, err, tt.rate, tt.burst)
		}
	}
}
