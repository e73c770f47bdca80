package units

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"131072", 131072},
		{"64k", 64000},
		{"64K", 64 << 10},
		{"16m", 16000000},
		{"16M", 16 << 20}, // -w 16M is 16 MiB
		{"1.5G", 3 << 29},
		{"1.5g", 1500000000},
		{"2t", 2e12},
		{"2T", 2 << 40},
		{".5K", 512},
		{"5.", 5},
		{"0.1K", 102}, // 102.4 rounds down
		{"0.5", 1},    // a half byte rounds up
		{"007", 7},    // leading zeros are decimal, not octal
		{"8388607T", 8388607 << 40},
		{"9223372036854775807", 1<<63 - 1},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseSizeErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"12x", `invalid size "12x": unknown suffix "x" (want k, m, g, t, K, M, G or T)`},
		{"16MB", `invalid size "16MB": unknown suffix "MB"`},
		{"1e6", `unknown suffix "e6"`},
		{"", `invalid size "": empty`},
		{"-1", `invalid size "-1": must not be negative`},
		{"-0", "must not be negative"},
		{"NaN", `invalid size "NaN": not a finite number`},
		{"Inf", "not a finite number"},
		{"+Inf", "not a finite number"},
		{"K", "not a number"},
		{"1.2.3", "not a number"},
		{".", "not a number"},
		{" 5", "not a number"},
		{"+5", "not a number"},
		{"0x10", `unknown suffix "x10"`},
		{"9223372036854775808", "too large"},
		{"8388608T", "too large"},
		{"99999999999999999999999999999999999999G", "too large"},
	}
	for _, tt := range tests {
		_, err := ParseSize(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSize(%q) error = %v; want it to contain %q", tt.in, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSize(%q) error spans lines: %q", tt.in, err)
		}
	}
}
