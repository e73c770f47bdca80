package hostmon

import (
	"strings"
	"testing"
)

func TestParseSysctl(t *testing.T) {
	if v, err := parseSysctlInt([]byte("4194304\n")); err != nil || v != 4194304 {
		t.Errorf("int: %v, %v", v, err)
	}
	if v, err := parseSysctlTriple([]byte("4096\t131072\t6291456\n")); err != nil || v != [3]int64{4096, 131072, 6291456} {
		t.Errorf("triple: %v, %v", v, err)
	}
	if v, err := parseSysctlWord([]byte("fq_codel\n")); err != nil || v != "fq_codel" {
		t.Errorf("word: %q, %v", v, err)
	}
	if v, err := parseSysctlWords([]byte("reno bbr cubic\n")); err != nil || strings.Join(v, ",") != "reno,bbr,cubic" {
		t.Errorf("words: %v, %v", v, err)
	}

	bad := []struct {
		name  string
		parse func([]byte) error
		in    string
	}{
		{"int empty", func(b []byte) error { _, err := parseSysctlInt(b); return err }, ""},
		{"int two", func(b []byte) error { _, err := parseSysctlInt(b); return err }, "1 2"},
		{"int overflow", func(b []byte) error { _, err := parseSysctlInt(b); return err }, "99999999999999999999"},
		{"int text", func(b []byte) error { _, err := parseSysctlInt(b); return err }, "lots"},
		{"triple short", func(b []byte) error { _, err := parseSysctlTriple(b); return err }, "4096 131072"},
		{"triple extra", func(b []byte) error { _, err := parseSysctlTriple(b); return err }, "1 2 3 4"},
		{"triple overflow", func(b []byte) error { _, err := parseSysctlTriple(b); return err }, "1 2 99999999999999999999"},
		{"word empty", func(b []byte) error { _, err := parseSysctlWord(b); return err }, "\n"},
		{"word two", func(b []byte) error { _, err := parseSysctlWord(b); return err }, "fq codel"},
		{"words too many", func(b []byte) error { _, err := parseSysctlWords(b); return err }, strings.Repeat("x ", maxSysctlWords+1)},
	}
	for _, tt := range bad {
		if err := tt.parse([]byte(tt.in)); err == nil {
			t.Errorf("%s: %q parsed without error", tt.name, tt.in)
		}
	}
}

func TestParseSysctlIntOverflowIsZero(t *testing.T) {
	// strconv returns the clamped value with ErrRange; a caller that keeps
	// the value despite the error must not see a huge limit.
	if v, err := parseSysctlInt([]byte("99999999999999999999")); err == nil || v != 0 {
		t.Errorf("got %d, %v; want 0 and an error", v, err)
	}
}

func FuzzParseSysctl(f *testing.F) {
	for _, s := range []string{"4194304\n", "4096 131072 6291456\n", "reno bbr\n", "", "-1", "1 2 3 4"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if v, err := parseSysctlInt(data); err != nil && v != 0 {
			t.Fatalf("int: %d with error %v", v, err)
		}
		if v, err := parseSysctlTriple(data); err != nil && v != [3]int64{} {
			t.Fatalf("triple: %v with error %v", v, err)
		}
		if w, err := parseSysctlWord(data); err == nil && (w == "" || strings.ContainsAny(w, " \t\n")) {
			t.Fatalf("word: %q", w)
		}
		if ws, err := parseSysctlWords(data); err == nil && len(ws) > maxSysctlWords {
			t.Fatalf("words: %d", len(ws))
		}
	})
}
