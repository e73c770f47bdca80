package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wireperf/wireperf/internal/testutil/race"
)

func TestCheckKeyStrength(t *testing.T) {
	for key, want := range map[string]string{
		"aaaaaaaaaaaaaaaa":                         "bits as hex",
		"0123456789abcdef0123":                     "80 bits as hex",
		"4c1f0b3e8a9d27f65e0c1a7b93d4f2e8":         "",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "distinct",
		"Zm9vYmFyYmF6cXV4cXV1eA":                   "",
		"Zm9vYmFyYmF6cXV4cXV":                      "bits as base64",
		"xxxxxxxxxxxxxxxxxxxxx1234567890ab":        "a third",
		"short":                                    "shorter than",

		// Repeats, of any period.
		"Passw0rd!Passw0rd!Passw0rd!Passw0rd!": "repeats",
		"0123456789abcdef0123456789abcdef":     "repeats",
		"q8Zr2Lm4Xv7q8Zr2Lm4Xv7q8Zr2Lm4Xv7":    "repeats",
		"a1B2c3D4e5F6g7H8a1B2c3D4e5F6g7H8":     "repeats",
		// Sequences and keyboard walks.
		"abcdefghijklmnopqrstuvwxyz012345":  "sequence",
		"zxcvbnm,./asdfghjkl;'qwertyuiop[]": "keyboard walk",
		"qwertyuiopasdfghjklzxcvbnm123456":  "not a random key",
		// Dictionary shapes: words, l33t spellings, a passphrase.
		"correct-horse-battery-staple-zz":       "dictionary words",
		"correcthorsebatterystaplecorrecthorse": "dictionary words",
		"Tr0ub4dor&3Tr0ub4dor&3xyzXYZ12345":     "not a random key",
	} {
		err := CheckKeyStrength(key)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", key, err, want)
		}
		if err != nil && (len(key) >= MinKeyLen && strings.Contains(err.Error(), key[:8]) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%q: the error shows the key or is not one line: %v", key, err)
		}
	}
}

// Random keys of the least strength accepted, and the ones `key new`
// makes, pass: the pattern checks refuse no random key.
func TestRandomKeysPass(t *testing.T) {
	n := 50 // 150 keys; each check costs about 15 ms, ten times that under -race
	if testing.Short() || race.Enabled {
		n = 3
	}
	for range n {
		k, err := NewKey()
		if err != nil || len(k) != 64 {
			t.Fatal(k, err)
		}
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{k, hex.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b)[:22]} {
			if err := CheckKeyStrength(key); err != nil {
				t.Fatalf("a random key %s: %v", key, err)
			}
		}
	}
}

// A key of thousands of characters is judged quickly (its first
// maxJudged characters are searched for patterns) and, being a repeat,
// refused.
func TestLongKeyIsJudgedByItsStart(t *testing.T) {
	key := strings.Repeat("q8Zr2Lm4Xv7", 1000)
	if err := CheckKeyStrength(key); err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("%v; want repeats", err)
	}
}

// Whatever a key file holds, the check answers without panicking, in one
// line that does not show the key, and accepts nothing shorter than
// MinKeyLen.
func FuzzCheckKeyStrength(f *testing.F) {
	for _, s := range []string{"4c1f0b3e8a9d27f65e0c1a7b93d4f2e8", "Passw0rd!Passw0rd!Passw0rd!Passw0rd!", "Zm9vYmFyYmF6cXV4cXV1eA==", "correct-horse-battery-staple-zz", "\xff\xfe0123456789abcdef", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if len(key) > 4096 {
			return // a key file line; the scanner's limit is far above any key
		}
		err := CheckKeyStrength(key)
		if err == nil {
			if len(key) < MinKeyLen {
				t.Fatalf("accepted %q, shorter than %d", key, MinKeyLen)
			}
			return
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !utf8.ValidString(msg) {
			t.Fatalf("%q: error %q is not one line of text", key, msg)
		}
		if len(key) >= MinKeyLen && strings.Contains(msg, key) {
			t.Fatalf("the error shows the key: %q", msg)
		}
	})
}
