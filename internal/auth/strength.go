package auth

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/trustelem/zxcvbn"
)

// MinKeyBits is the least a key must carry: a captured challenge and
// answer let an attacker test guesses offline, as fast as HMAC-SHA256
// runs, so a key must be out of reach of any such search.
const MinKeyBits = 128

// Patterns: a key's length and alphabet say what it could carry; what it
// does carry is judged by zxcvbn, which finds the shapes people make keys
// of (repeats of any period, sequences, keyboard walks, dictionary words
// with their l33t spellings, dates) and estimates the guesses a search
// that knows them needs. Against random characters it is a brute force of
// 10 guesses a character, so a random key scores close to that ceiling
// (32 hex characters: 91 bits at worst in 3,000 drawn, 106 at most; 22 of
// base64: 66 of 73), and a key of patterns far under it (Passw0rd! four
// times: 15 bits of 120; 0123456789abcdef twice: 15 of 106).
const (
	// minRandomShare is the share of that ceiling a key must reach: a
	// random key clears it with a wide margin (0.85 at worst above), a
	// key built of patterns does not.
	minRandomShare = 0.6
	// maxWordShare is the most of a key that dictionary words may
	// cover: a passphrase of four common words scores near a random
	// key's share by its length alone, but is a few dozen bits to a
	// search of word lists. Random keys: 0.25 of 32 hex characters at
	// most in 2,000 drawn, 0.36 of 22 of base64.
	maxWordShare = 0.5
	// maxJudged bounds the characters searched for patterns: the search
	// costs more than linear time (64 characters of l33t symbols: 0.4 s;
	// a random key: 15 ms), and a key is no weaker than its start. A key
	// from wireperf key new is 64 characters.
	maxJudged = 64
)

// CheckKeyStrength refuses a key that is too weak to hold against an
// offline search: under MinKeyBits by its alphabet (hex carries 4 bits a
// character, base64 6, anything else is taken as base64 at best), plainly
// not random (few distinct characters, one character much repeated), or
// made of patterns (repeats, sequences, keyboard walks, dictionary words)
// that a search tries first. The error never shows the key.
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
	return checkPatterns(key)
}

// checkPatterns refuses a key that zxcvbn finds is built of patterns.
func checkPatterns(key string) error {
	judged := key
	if len(judged) > maxJudged {
		judged = judged[:maxJudged]
	}
	r := zxcvbn.PasswordStrength(judged, nil)
	bits := math.Log2(max(r.Guesses, 1))
	ceiling := float64(len(judged)) * math.Log2(10)
	words := 0
	for _, m := range r.Sequence {
		if m.Pattern == "dictionary" {
			words += len(m.Token)
		}
	}
	if share := float64(words) / float64(len(judged)); share > maxWordShare {
		return fmt.Errorf("%.0f%% of it is dictionary words: a search of word lists finds it long before 128 random bits: not a random key (wireperf key new makes one)", 100*share)
	}
	if bits >= minRandomShare*ceiling {
		return nil
	}
	var kinds []string
	seen := map[string]bool{}
	for _, m := range r.Sequence {
		kind := patternNames[m.Pattern]
		if kind == "" || seen[kind] {
			continue
		}
		seen[kind] = true
		kinds = append(kinds, kind)
	}
	what := "patterns"
	if len(kinds) > 0 {
		what = strings.Join(kinds, ", ")
	}
	return fmt.Errorf("made of %s: about %.0f bits to a search that knows them, where random characters of its length carry %.0f: not a random key (wireperf key new makes one)", what, bits, ceiling)
}

// patternNames are zxcvbn's patterns as the error names them.
var patternNames = map[string]string{
	"repeat":     "repeats",
	"sequence":   "a sequence",
	"spatial":    "a keyboard walk",
	"dictionary": "dictionary words",
	"date":       "a date",
	"regex":      "a recent year",
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
