package auth

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// MinKeyBits is the least a key must carry: a captured challenge and
// answer let an attacker test guesses offline, as fast as HMAC-SHA256
// runs, so a key must be out of reach of any such search.
const MinKeyBits = 128

// CheckKeyStrength refuses a key that is too weak to hold against an
// offline search: under MinKeyBits by its alphabet (hex carries 4 bits a
// character, base64 6, anything else is taken as base64 at best), or
// plainly not random (few distinct characters, one character much
// repeated).
func CheckKeyStrength(key string) error {
	if len(key) < MinKeyLen {
		return fmt.Errorf("shorter than %d characters", MinKeyLen)
	}
	bits := 6 * len(strings.TrimRight(key, "="))
	kind := "base64"
	if isHex(key) {
		bits, kind = 4*len(key), "hex"
	}
	if bits < MinKeyBits {
		need := (MinKeyBits + 5) / 6
		if kind == "hex" {
			need = MinKeyBits / 4
		}
		return fmt.Errorf("%d bits as %s, under %d: want at least %d %s characters (wireperf key new makes one)", bits, kind, MinKeyBits, need, kind)
	}
	counts := map[rune]int{}
	most := 0
	for _, r := range key {
		counts[r]++
		most = max(most, counts[r])
	}
	if len(counts) < 8 {
		return fmt.Errorf("only %d distinct characters: not a random key (wireperf key new makes one)", len(counts))
	}
	if most*3 > len(key) {
		return fmt.Errorf("one character is a third of it: not a random key (wireperf key new makes one)")
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// NewKey is a fresh key: 256 random bits in hex.
func NewKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
