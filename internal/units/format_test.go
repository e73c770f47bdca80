package units

import (
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, letter := range strings.Split(formatLetters, "") {
		f, err := ParseFormat(letter)
		if err != nil || f.String() != letter {
			t.Errorf("ParseFormat(%q) = %v, %v; want %s", letter, f, err, letter)
		}
	}
	for _, bad := range []string{"", "x", "kk", "K ", "é", "c", "0"} {
		if f, err := ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) = %v, nil; want an error", bad, f)
		} else if !strings.Contains(err.Error(), "invalid format") {
			t.Errorf("ParseFormat(%q) error = %q; want it to name the bad format", bad, err)
		}
	}
}

func TestFormatDefaults(t *testing.T) {
	tests := []struct {
		f     Format
		str   string
		bytes bool
	}{
		{0, "a", false}, // the zero Format is the default
		{'z', "a", false},
		{'A', "A", true},
		{'K', "K", true},
		{'k', "k", false},
	}
	for _, tt := range tests {
		if tt.f.String() != tt.str || tt.f.Bytes() != tt.bytes {
			t.Errorf("Format(%q): String %q Bytes %v; want %q %v", byte(tt.f), tt.f.String(), tt.f.Bytes(), tt.str, tt.bytes)
		}
	}
}
