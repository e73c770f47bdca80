package units

import "testing"

func TestThousands(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{999, "999"},
		{1000, "1,000"},
		{8120, "8,120"},
		{123456, "123,456"},
		{1234567, "1,234,567"},
		{-1234, "-1,234"},
	}
	for _, tt := range tests {
		if got := Thousands(tt.n); got != tt.want {
			t.Errorf("Thousands(%d) = %q; want %q", tt.n, got, tt.want)
		}
	}
}
