// Package auth keeps the wrong people off a server: pre-shared keys per
// user, proven by an HMAC over a fresh challenge so that no key crosses
// the network and no recorded answer can be replayed, and allow and deny
// lists of address prefixes.
package auth

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unicode"
)

// MinKeyLen is the shortest key accepted, in bytes of its text.
const MinKeyLen = 16

// NonceLen is the size of each side's nonce.
const NonceLen = 32

// ErrFailed is every authentication failure, as the user sees it.
var ErrFailed = errors.New("authentication failed")

// Keys are a server's users and their keys.
type Keys map[string][]byte

// Credential is a client's user name and key.
type Credential struct {
	User string
	Key  []byte
}

// LoadKeys reads a key file: one `name key` pair a line, with blank lines
// and lines starting with # ignored. The file must hold at least one key
// and must not be readable by group or others.
func LoadKeys(path string) (Keys, error) {
	f, err := OpenPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	keys := Keys{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.FieldsFunc(line, unicode.IsSpace)
		if len(fields) != 2 {
			return nil, fmt.Errorf("key file %s line %d: want `name key`", path, n)
		}
		if err := CheckKeyStrength(fields[1]); err != nil {
			return nil, fmt.Errorf("key file %s line %d: weak key: %v", path, n, err)
		}
		if _, dup := keys[fields[0]]; dup {
			return nil, fmt.Errorf("key file %s line %d: user %q listed twice", path, n, fields[0])
		}
		keys[fields[0]] = []byte(fields[1])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("key file %s holds no key", path)
	}
	return keys, nil
}

// OpenPrivate opens a file that holds a secret (keys, a token, a
// password): on Unix its mode must keep group and others out, since a
// secret others can read is no longer one.
func OpenPrivate(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if st.Mode().Perm()&0o077 != 0 {
			f.Close()
			return nil, fmt.Errorf("%s is readable by others (mode %04o); chmod 600 it", path, st.Mode().Perm())
		}
	}
	return f, nil
}

// LoadCredential reads a client's key file, in the server's format: its
// first `name key` line is the client's.
func LoadCredential(path string) (*Credential, error) {
	keys, err := LoadKeys(path)
	if err != nil {
		return nil, err
	}
	first, err := firstUser(path)
	if err != nil {
		return nil, err
	}
	return &Credential{User: first, Key: keys[first]}, nil
}

func firstUser(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("key file: %w", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		return string(bytes.Fields(line)[0]), nil
	}
	return "", fmt.Errorf("key file %s holds no key", path)
}

// Nonce is a fresh random challenge.
func Nonce() ([]byte, error) {
	b := make([]byte, NonceLen)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// mac binds a role, both nonces and the user under the key: the client's
// and the server's proofs differ, so one cannot be reflected as the other.
func mac(key []byte, role string, serverNonce, clientNonce []byte, user string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("wireperf auth v1\x00" + role + "\x00"))
	m.Write(serverNonce)
	m.Write(clientNonce)
	m.Write([]byte(user))
	return m.Sum(nil)
}

// ClientProof is the client's answer to a challenge.
func ClientProof(key, serverNonce, clientNonce []byte, user string) []byte {
	return mac(key, "client", serverNonce, clientNonce, user)
}

// ServerProof is the server's answer to the client's nonce.
func ServerProof(key, serverNonce, clientNonce []byte, user string) []byte {
	return mac(key, "server", serverNonce, clientNonce, user)
}

// Verify checks a client's answer; it returns the user's key when the
// answer is right. An unknown user costs the same as a wrong key.
func (k Keys) Verify(user string, serverNonce, clientNonce, proof []byte) ([]byte, bool) {
	key, known := k[user]
	if !known {
		key = []byte("no such user, same work")
	}
	if len(clientNonce) != NonceLen {
		return nil, false
	}
	ok := hmac.Equal(ClientProof(key, serverNonce, clientNonce, user), proof)
	return key, ok && known
}

// CheckServerProof checks the server's answer.
func (c *Credential) CheckServerProof(serverNonce, clientNonce, proof []byte) bool {
	return hmac.Equal(ServerProof(c.Key, serverNonce, clientNonce, c.User), proof)
}

// Session is what both ends of an authenticated control connection know
// once the handshake is done: the user's key and the two nonces. Keys
// derived from it are fresh for every connection, and bound to the user.
type Session struct {
	User                     string
	Key                      []byte
	ServerNonce, ClientNonce []byte
}

// DatagramKey is the key that signs one test's UDP datagrams: an HMAC of
// the session and the test's token under the user's key, so that nobody
// without the key can compute it, and no other test or connection shares
// it.
func (s *Session) DatagramKey(token [16]byte) []byte {
	if s == nil {
		return nil
	}
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte("wireperf datagram key v1\x00"))
	m.Write(s.ServerNonce)
	m.Write(s.ClientNonce)
	m.Write([]byte(s.User))
	m.Write([]byte{0})
	m.Write(token[:])
	return m.Sum(nil)
}

// FrameKey is the key that signs one direction's control frames after
// the handshake ("client" for what the client sends, "server" for the
// other way): derived as DatagramKey is, so that each connection and
// each direction has its own, and a frame can't be reflected back.
func (s *Session) FrameKey(direction string) []byte {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte("wireperf frame key v1\x00" + direction + "\x00"))
	m.Write(s.ServerNonce)
	m.Write(s.ClientNonce)
	m.Write([]byte(s.User))
	return m.Sum(nil)
}
