package iperf3

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // OAEP's hash as OpenSSL's default, which iperf3 uses
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// iperf3's authentication (3.x's --username, --rsa-public-key-path,
// --rsa-private-key-path, --authorized-users-path,
// --time-skew-threshold, --use-pkcs1-padding): the client encrypts
// "user: U\npwd:  P\nts:   T" (T its clock in Unix seconds) with the
// server's RSA public key, OAEP (SHA-1, as OpenSSL's default) unless
// PKCS#1 v1.5 is asked for, and sends it base64'd as the parameters'
// "authtoken". The server decrypts it, finds U in its users file with
// sha256("{U}P") in hex, and refuses a T further than its skew from
// its own clock.

// DefaultSkewThreshold is iperf3's --time-skew-threshold default.
const DefaultSkewThreshold = 10 * time.Second

// Limits on what the files and the token may hold: all of them are
// hostile input.
const (
	maxKeyFile   = 64 << 10 // a PEM RSA key of 16384 bits is under 13 KB
	maxUsersFile = 1 << 20
	// maxUsersLine is iperf3's line buffer (fgets of 1024); a longer
	// line is refused rather than split as fgets would.
	maxUsersLine = 1023
	// maxTokenLen bounds the base64 token: a 16384-bit key's 2048-byte
	// ciphertext is 2732 characters.
	maxTokenLen = 4096
	minKeyBits  = 1024
	maxKeyBits  = 16384
)

// Credentials are what our client proves to an iperf3 server.
type Credentials struct {
	User     string
	Password string
	Key      *rsa.PublicKey
	// PKCS1 pads with PKCS#1 v1.5 (--use-pkcs1-padding, what iperf3
	// before 3.17 always used) instead of OAEP.
	PKCS1 bool
}

// String never shows the password.
func (c Credentials) String() string { return "iperf3 credentials of user " + strconv.Quote(c.User) }

// GoString never shows the password either (%#v).
func (c Credentials) GoString() string { return c.String() }

// Check refuses credentials iperf3's token cannot carry: an empty user
// or password, or one with white space (the server reads each as one
// word), or a token too long for the key.
func (c Credentials) Check() error {
	switch {
	case c.Key == nil:
		return errors.New("no RSA public key")
	case c.User == "" || strings.IndexFunc(c.User, isSpaceOrNUL) >= 0 || strings.Contains(c.User, ","):
		return errors.New("the user name must be one word, without commas")
	case c.Password == "" || strings.IndexFunc(c.Password, isSpaceOrNUL) >= 0:
		return errors.New("the password must be one word: iperf3's token cannot carry white space")
	}
	if n, max := len(tokenText(c.User, c.Password, time.Now().Unix())), c.maxPlain(); n > max {
		return fmt.Errorf("user and password too long for a %d-bit key (%d bytes of token, at most %d)", c.Key.N.BitLen(), n, max)
	}
	return nil
}

func (c Credentials) maxPlain() int {
	k := c.Key.Size()
	if c.PKCS1 {
		return k - 11
	}
	return k - 2*sha1.Size - 2
}

func isSpaceOrNUL(r rune) bool { return r == 0 || (r < 0x80 && isCSpace(byte(r))) }

// isCSpace is C's isspace in the C locale: what sscanf's %s stops at.
func isCSpace(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }

func tokenText(user, password string, ts int64) string {
	return "user: " + user + "\npwd:  " + password + "\nts:   " + strconv.FormatInt(ts, 10)
}

// Token is the "authtoken" our client sends, stamped with now.
func (c Credentials) Token(now time.Time) (string, error) {
	if err := c.Check(); err != nil {
		return "", err
	}
	plain := []byte(tokenText(c.User, c.Password, now.Unix()))
	var ct []byte
	var err error
	if c.PKCS1 {
		ct, err = rsa.EncryptPKCS1v15(rand.Reader, c.Key, plain) //nolint:staticcheck // iperf3's --use-pkcs1-padding
	} else {
		ct, err = rsa.EncryptOAEP(sha1.New(), rand.Reader, c.Key, plain, nil)
	}
	clear(plain)
	if err != nil {
		return "", fmt.Errorf("encrypting the token: %w", err)
	}
	return base64.StdEncoding.EncodeToString(ct), nil
}

// Token failures a server tells apart in its log (the client hears
// iperf3's one "test authorization failed" whatever the reason).
var (
	ErrBadToken      = errors.New("the token does not decrypt to iperf3's credentials")
	ErrNoToken       = errors.New("no credentials: this server requires iperf3's --username")
	ErrUnknownUser   = errors.New("unknown user")
	ErrWrongPassword = errors.New("wrong password")
	ErrStale         = errors.New("timestamp outside the time skew threshold")
)

// AuthError is an iperf3 client that failed authentication: the user it
// named (when its token decrypted) and why, one of the Err values above.
// It never holds the password.
type AuthError struct {
	User   string
	Reason error
}

func (e *AuthError) Error() string {
	if e.User == "" {
		return "iperf3 authentication failed: " + e.Reason.Error()
	}
	return fmt.Sprintf("iperf3 authentication of user %q failed: %v", e.User, e.Reason)
}

func (e *AuthError) Unwrap() error { return e.Reason }

// ServerAuth admits iperf3 clients whose token decrypts with Key, names
// a user of the users file with its password, and was made within Skew
// of the server's clock.
type ServerAuth struct {
	Key *rsa.PrivateKey
	// UsersPath is read at each attempt, as iperf3 does, so that users
	// change without a restart; LoadUsers checks it when the server
	// starts.
	UsersPath string
	Skew      time.Duration // 0: DefaultSkewThreshold
	PKCS1     bool
	now       func() time.Time // tests' clock; nil: time.Now
}

// Check admits a token or says why not (*AuthError). user is the name
// the token carried.
func (a *ServerAuth) Check(token string) (user string, err error) {
	if token == "" {
		return "", &AuthError{Reason: ErrNoToken}
	}
	user, password, ts, err := a.decode(token)
	if err != nil {
		return "", &AuthError{Reason: ErrBadToken}
	}
	defer clear(password)
	now := time.Now
	if a.now != nil {
		now = a.now
	}
	skew := a.Skew
	if skew <= 0 {
		skew = DefaultSkewThreshold
	}
	if d := now().Unix() - ts; d > int64(skew/time.Second) || d < -int64(skew/time.Second) {
		return user, &AuthError{User: user, Reason: ErrStale}
	}
	users, err := LoadUsers(a.UsersPath)
	if err != nil {
		return user, &AuthError{User: user, Reason: err}
	}
	if err := users.check(user, password); err != nil {
		return user, &AuthError{User: user, Reason: err}
	}
	return user, nil
}

// decode decrypts and parses a token; password is a copy the caller
// clears.
func (a *ServerAuth) decode(token string) (user string, password []byte, ts int64, err error) {
	if len(token) > maxTokenLen {
		return "", nil, 0, errors.New("token too long")
	}
	ct, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return "", nil, 0, err
	}
	if len(ct) != a.Key.Size() {
		return "", nil, 0, fmt.Errorf("ciphertext of %d bytes for a %d-byte key", len(ct), a.Key.Size())
	}
	var plain []byte
	if a.PKCS1 {
		plain, err = rsa.DecryptPKCS1v15(nil, a.Key, ct) //nolint:staticcheck // iperf3's --use-pkcs1-padding
	} else {
		plain, err = rsa.DecryptOAEP(sha1.New(), nil, a.Key, ct, nil)
	}
	if err != nil {
		return "", nil, 0, err
	}
	defer clear(plain)
	return ParseTokenText(plain)
}

// ParseTokenText reads a decrypted token as iperf3's server does
// (sscanf of "user: %s\npwd:  %s\nts:   %" PRId64): white space in the
// format matches any run of white space, each %s one word; the text
// ends at a NUL, and what follows the timestamp is ignored. password is
// a copy of the bytes, for the caller to clear.
func ParseTokenText(b []byte) (user string, password []byte, ts int64, err error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	p := tokenParser{b: b}
	bad := errors.New("not iperf3's token text")
	if !p.literal("user:") {
		return "", nil, 0, bad
	}
	u := p.word()
	if u == nil || !p.literal("pwd:") {
		return "", nil, 0, bad
	}
	pw := p.word()
	if pw == nil || !p.literal("ts:") {
		return "", nil, 0, bad
	}
	ts, ok := p.int64()
	if !ok {
		return "", nil, 0, bad
	}
	return string(u), bytes.Clone(pw), ts, nil
}

type tokenParser struct {
	b []byte
	i int
}

func (p *tokenParser) skipSpace() {
	for p.i < len(p.b) && isCSpace(p.b[p.i]) {
		p.i++
	}
}

// literal matches s after any white space (the format's own white
// space and a %s's leading skip are the same rule).
func (p *tokenParser) literal(s string) bool {
	p.skipSpace()
	if !bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		return false
	}
	p.i += len(s)
	return true
}

func (p *tokenParser) word() []byte {
	p.skipSpace()
	start := p.i
	for p.i < len(p.b) && !isCSpace(p.b[p.i]) {
		p.i++
	}
	if p.i == start {
		return nil
	}
	return p.b[start:p.i]
}

func (p *tokenParser) int64() (int64, bool) {
	p.skipSpace()
	start := p.i
	if p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] == '+') {
		p.i++
	}
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return v, err == nil
}

// Users are an authorized users file: each user's sha256("{user}password").
type Users map[string][sha256.Size]byte

// PasswordHash is what a users file holds for user's password.
func PasswordHash(user, password string) [sha256.Size]byte {
	return sha256.Sum256([]byte("{" + user + "}" + password))
}

// UsersLine is a users file's line for user and password, as iperf3's
// docs show it: "user,sha256 in hex".
func UsersLine(user, password string) string {
	h := PasswordHash(user, password)
	return user + "," + hex.EncodeToString(h[:])
}

// check compares in constant time, and compares for an unknown user
// too, so that the time taken does not tell which users exist.
func (u Users) check(user string, password []byte) error {
	salted := make([]byte, 0, len(user)+len(password)+2)
	salted = append(append(append(append(salted, '{'), user...), '}'), password...)
	got := sha256.Sum256(salted)
	clear(salted)
	want, known := u[user]
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !known {
		if !known {
			return ErrUnknownUser
		}
		return ErrWrongPassword
	}
	return nil
}

// LoadUsers reads an authorized users file (--authorized-users-path).
func LoadUsers(path string) (Users, error) {
	b, err := readLimited(path, maxUsersFile)
	if err != nil {
		return nil, err
	}
	u, err := ParseUsers(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// ParseUsers reads a users file's lines as iperf3 does: "user,hash",
// lines that are empty, start with '#' or have no comma skipped, fields
// split at commas with empty ones skipped (strtok). Unlike iperf3 it
// refuses a hash that is not 64 hex digits, a user given twice and an
// overlong line, naming the line, rather than never matching them.
func ParseUsers(b []byte) (Users, error) {
	u := Users{}
	for n, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "\r")
		if len(line) > maxUsersLine {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n+1, maxUsersLine)
		}
		if line == "" || line[0] == '#' || !strings.Contains(line, ",") {
			continue
		}
		var fields []string
		for _, f := range strings.Split(line, ",") {
			if f != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) < 2 {
			return nil, fmt.Errorf("line %d: want \"user,sha256 of {user}password in hex\"", n+1)
		}
		d, err := hex.DecodeString(fields[1])
		if err != nil || len(d) != sha256.Size {
			return nil, fmt.Errorf("line %d: the hash of user %q is not 64 hex digits", n+1, fields[0])
		}
		h := [sha256.Size]byte(d)
		if _, dup := u[fields[0]]; dup {
			return nil, fmt.Errorf("line %d: user %q given twice", n+1, fields[0])
		}
		u[fields[0]] = h
	}
	return u, nil
}

// LoadPublicKey reads an RSA public key in PEM: "PUBLIC KEY" (PKIX, what
// `openssl rsa -pubout` writes and iperf3 reads) or "RSA PUBLIC KEY"
// (PKCS#1).
func LoadPublicKey(path string) (*rsa.PublicKey, error) {
	b, err := readLimited(path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParsePublicKey is LoadPublicKey of the file's bytes.
func ParsePublicKey(b []byte) (*rsa.PublicKey, error) {
	blk, err := onePEM(b)
	if err != nil {
		return nil, err
	}
	var k *rsa.PublicKey
	switch blk.Type {
	case "PUBLIC KEY":
		pk, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("not a PKIX public key: %v", err)
		}
		var ok bool
		if k, ok = pk.(*rsa.PublicKey); !ok {
			return nil, fmt.Errorf("a %T public key, not RSA", pk)
		}
	case "RSA PUBLIC KEY":
		if k, err = x509.ParsePKCS1PublicKey(blk.Bytes); err != nil {
			return nil, fmt.Errorf("not a PKCS#1 public key: %v", err)
		}
	case "PRIVATE KEY", "RSA PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("this is a private key: give the client the public one (openssl rsa -in KEY -pubout)")
	default:
		return nil, fmt.Errorf("a PEM %q block, not a PUBLIC KEY", blk.Type)
	}
	return k, keySize(k.N.BitLen())
}

// LoadPrivateKey reads an unencrypted RSA private key in PEM: "PRIVATE
// KEY" (PKCS#8, what `openssl genrsa` writes) or "RSA PRIVATE KEY"
// (PKCS#1).
func LoadPrivateKey(path string) (*rsa.PrivateKey, error) {
	b, err := readLimited(path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	k, err := ParsePrivateKey(b)
	clear(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParsePrivateKey is LoadPrivateKey of the file's bytes.
func ParsePrivateKey(b []byte) (*rsa.PrivateKey, error) {
	blk, err := onePEM(b)
	if err != nil {
		return nil, err
	}
	var k *rsa.PrivateKey
	switch blk.Type {
	case "PRIVATE KEY":
		pk, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("not a PKCS#8 private key: %v", err)
		}
		var ok bool
		if k, ok = pk.(*rsa.PrivateKey); !ok {
			return nil, fmt.Errorf("a %T private key, not RSA", pk)
		}
	case "RSA PRIVATE KEY":
		if _, enc := blk.Headers["DEK-Info"]; enc {
			return nil, errors.New("the key is encrypted with a passphrase: decrypt it first (openssl rsa -in KEY -out PLAIN)")
		}
		if k, err = x509.ParsePKCS1PrivateKey(blk.Bytes); err != nil {
			return nil, fmt.Errorf("not a PKCS#1 private key: %v", err)
		}
	case "ENCRYPTED PRIVATE KEY":
		return nil, errors.New("the key is encrypted with a passphrase: decrypt it first (openssl pkey -in KEY -out PLAIN)")
	case "PUBLIC KEY", "RSA PUBLIC KEY":
		return nil, errors.New("this is a public key: the server needs the private one")
	default:
		return nil, fmt.Errorf("a PEM %q block, not a PRIVATE KEY", blk.Type)
	}
	return k, keySize(k.N.BitLen())
}

func keySize(bits int) error {
	if bits < minKeyBits || bits > maxKeyBits {
		return fmt.Errorf("an RSA key of %d bits: want %d to %d", bits, minKeyBits, maxKeyBits)
	}
	return nil
}

func onePEM(b []byte) (*pem.Block, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM block in it")
	}
	return blk, nil
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}
