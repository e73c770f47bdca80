package units

import (
	"strings"
	"testing"
)

func TestParseRate(t *testing.T) {
	// A rate's suffix is a power of 1000 in either case, as iperf3's
	// unit_atof_rate reads -b: "-b 1G" is 10^9 bit/s.
	tests := []struct {
		in   string
		want float64
	}{
		{"0", 0},
		{"1234", 1234},
		{"1k", 1e3},
		{"1K", 1e3},
		{"1m", 1e6},
		{"1M", 1e6},
		{"1g", 1e9},
		{"1G", 1e9},
		{"1t", 1e12},
		{"1T", 1e12},
		{"750m", 750e6},
		{"1.5G", 1.5e9},
		{"2.5M", 2.5e6},
		{"0.1k", 100},
		{".5g", 5e8},
		{"100K", 1e5},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRateUpperBinary(t *testing.T) {
	// The rule campaigns stored before rates followed iperf3 were read by.
	tests := []struct {
		in   string
		want float64
	}{
		{"1k", 1e3},
		{"1K", 1 << 10},
		{"1m", 1e6},
		{"1M", 1 << 20},
		{"1g", 1e9},
		{"1G", 1 << 30},
		{"1t", 1e12},
		{"1T", 1 << 40},
		{"1.5G", 3 << 29},
		{"1234", 1234},
	}
	for _, tt := range tests {
		got, err := ParseRateUpperBinary(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRateUpperBinary(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRateErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `invalid rate "": empty`},
		{"-1m", `invalid rate "-1m": must not be negative`},
		{"10x", `invalid rate "10x": unknown suffix "x" (want k, m, g, t, K, M, G or T)`},
		{"1Gb", `invalid rate "1Gb": unknown suffix "Gb"`},
		{"100mbit", `unknown suffix "mbit"`},
		{"1e9", `unknown suffix "e9"`},
		{"NaN", `invalid rate "NaN": not a finite number`},
		{"G", `invalid rate "G": not a number`},
		{"1.2.3G", "not a number"},
		{"1" + strings.Repeat("0", 400) + "T", "too large"},
	}
	for _, tt := range tests {
		for _, parse := range []func(string) (float64, error){ParseRate, ParseRateUpperBinary} {
			_, err := parse(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parsing rate %q: error %v; want it to contain %q", tt.in, err, tt.want)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("parsing rate %q: error %q is more than one line", tt.in, err)
			}
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
		{in: "10M", rate: 10e6},
		{in: "10G/32", rate: 10e9, burst: 32},
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
