package authflags

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/auth"
)

func TestKeyName(t *testing.T) {
	if name, err := KeyName([]string{"alice"}); err != nil || name != "alice" {
		t.Fatalf("KeyName(alice) = %q, %v", name, err)
	}
	if name, err := KeyName(nil); err != nil || name == "" || strings.ContainsAny(name, " #") {
		t.Fatalf("KeyName() = %q, %v, want the user's name or wireperf", name, err)
	}
	for _, bad := range []string{"a b", "a#b", "tab\tname"} {
		if _, err := KeyName([]string{bad}); err == nil || !strings.Contains(err.Error(), "without blanks or '#'") {
			t.Errorf("KeyName(%q): %v, want refused", bad, err)
		}
	}
}

// A key line reads back as a key file's line: the name, then a key of
// 256 bits that the strength check accepts.
func TestKeyLine(t *testing.T) {
	line, err := KeyLine("alice")
	if err != nil {
		t.Fatal(err)
	}
	name, key, ok := strings.Cut(line, " ")
	if !ok || name != "alice" || len(key) != 64 {
		t.Fatalf("key line %q", line)
	}
	if err := auth.CheckKeyStrength(key); err != nil {
		t.Fatalf("the new key is refused: %v", err)
	}
	other, _ := KeyLine("alice")
	if other == line {
		t.Fatal("two key lines share their key")
	}
}
