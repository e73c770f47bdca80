package units

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"10", 10 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"0", 0},
		{".25", 250 * time.Millisecond},
		{"0.0000000015", 2}, // 1.5 ns rounds to 2
		{"12us", 12 * time.Microsecond},
		{"12µs", 12 * time.Microsecond},
		{"215ms", 215 * time.Millisecond},
		{"1m30s", 90 * time.Second},
		{"2h", 2 * time.Hour},
		{"1.5s", 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDurationErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"-1", `invalid duration "-1": must not be negative`},
		{"-5s", "must not be negative"},
		{"", "empty"},
		{"10x", `invalid duration "10x": want seconds`},
		{"NaN", "want seconds"},
		{"1.2.3", "want seconds"},
		{"+-1s", "want seconds"},
		{"99999999999", "too long"}, // seconds beyond time.Duration's 292 years
	}
	for _, tt := range tests {
		_, err := ParseDuration(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseDuration(%q) error = %v; want it to contain %q", tt.in, err, tt.want)
		}
	}
}
