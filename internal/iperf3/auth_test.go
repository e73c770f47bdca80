package iperf3

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	testKeyOnce sync.Once
	testKey     *rsa.PrivateKey
)

// authKey is one 2048-bit key for the package's tests (making one takes
// a while on a loaded machine).
func authKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	testKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

// authFiles writes the key pair (PKCS#8 and PKIX PEM, as openssl
// writes them) and a users file with lines to dir.
func authFiles(t testing.TB, dir string, lines ...string) (priv, pub, users string) {
	t.Helper()
	k := authKey(t)
	p8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	priv, pub, users = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem"), filepath.Join(dir, "users.csv")
	write := func(name string, b []byte) {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}))
	write(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}))
	write(users, []byte(strings.Join(lines, "\n")+"\n"))
	return priv, pub, users
}

func TestUsersLineIsIperf3s(t *testing.T) {
	// sha256sum of "{mario}rossi", as iperf3's docs make the file.
	const want = "mario,bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b"
	if got := UsersLine("mario", "rossi"); got != want {
		t.Errorf("UsersLine = %s, want %s", got, want)
	}
}

func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	_, _, users := authFiles(t, t.TempDir(), "# a comment", UsersLine("mario", "rossi"), UsersLine("luigi", "verdi"))
	k := authKey(t)
	at := time.Unix(1_800_000_000, 0)
	for _, pkcs1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("pkcs1=%v", pkcs1), func(t *testing.T) {
			c := Credentials{User: "luigi", Password: "verdi", Key: &k.PublicKey, PKCS1: pkcs1}
			tok, err := c.Token(at)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tok, "verdi") {
				t.Fatal("the token carries the password in clear")
			}
			srv := &ServerAuth{Key: k, UsersPath: users, PKCS1: pkcs1, now: func() time.Time { return at.Add(3 * time.Second) }}
			user, err := srv.Check(tok)
			if err != nil || user != "luigi" {
				t.Fatalf("Check = %q, %v; want luigi admitted", user, err)
			}
			// The other padding does not decrypt it.
			other := *srv
			other.PKCS1 = !pkcs1
			if _, err := other.Check(tok); !errors.Is(err, ErrBadToken) {
				t.Errorf("with the other padding, Check = %v, want %v", err, ErrBadToken)
			}
		})
	}
}

func TestTokenRefusals(t *testing.T) {
	t.Parallel()
	_, _, users := authFiles(t, t.TempDir(), UsersLine("mario", "rossi"))
	k := authKey(t)
	at := time.Unix(1_800_000_000, 0)
	token := func(user, password string) string {
		tok, err := Credentials{User: user, Password: password, Key: &k.PublicKey}.Token(at)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	encrypt := func(plain string) string {
		ct, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, &k.PublicKey, []byte(plain), nil)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(ct)
	}
	good := token("mario", "rossi")
	tests := []struct {
		name  string
		token string
		now   time.Time
		skew  time.Duration
		want  error
		user  string
	}{
		{"admitted at the default skew's edge", good, at.Add(DefaultSkewThreshold), 0, nil, "mario"},
		{"admitted from the future at the edge", good, at.Add(-DefaultSkewThreshold), 0, nil, "mario"},
		{"stale", good, at.Add(DefaultSkewThreshold + time.Second), 0, ErrStale, "mario"},
		{"from the future", good, at.Add(-DefaultSkewThreshold - time.Second), 0, ErrStale, "mario"},
		{"stale for a tighter skew", good, at.Add(3 * time.Second), 2 * time.Second, ErrStale, "mario"},
		{"in a wider skew", good, at.Add(time.Hour), 2 * time.Hour, nil, "mario"},
		{"unknown user", token("peach", "rossi"), at, 0, ErrUnknownUser, "peach"},
		{"wrong password", token("mario", "verdi"), at, 0, ErrWrongPassword, "mario"},
		{"no token", "", at, 0, ErrNoToken, ""},
		{"not base64", "!!" + good[2:], at, 0, ErrBadToken, ""},
		{"short ciphertext", base64.StdEncoding.EncodeToString(make([]byte, 100)), at, 0, ErrBadToken, ""},
		{"long ciphertext", base64.StdEncoding.EncodeToString(make([]byte, 512)), at, 0, ErrBadToken, ""},
		{"random ciphertext", base64.StdEncoding.EncodeToString(randomBytes(t, 256)), at, 0, ErrBadToken, ""},
		{"overlong token", strings.Repeat("A", maxTokenLen+4), at, 0, ErrBadToken, ""},
		{"plaintext not iperf3's", encrypt("hello"), at, 0, ErrBadToken, ""},
		{"plaintext without ts", encrypt("user: mario\npwd:  rossi\n"), at, 0, ErrBadToken, ""},
		{"plaintext with a word for ts", encrypt("user: mario\npwd:  rossi\nts:   soon"), at, 0, ErrBadToken, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &ServerAuth{Key: k, UsersPath: users, Skew: tt.skew, now: func() time.Time { return tt.now }}
			user, err := srv.Check(tt.token)
			if tt.want == nil {
				if err != nil || user != tt.user {
					t.Fatalf("Check = %q, %v; want %q admitted", user, err, tt.user)
				}
				return
			}
			var ae *AuthError
			if !errors.Is(err, tt.want) || !errors.As(err, &ae) {
				t.Fatalf("Check = %v, want an *AuthError of %v", err, tt.want)
			}
			if ae.User != tt.user || user != tt.user {
				t.Errorf("refused user %q (returned %q), want %q", ae.User, user, tt.user)
			}
			if strings.Contains(err.Error(), "rossi") || strings.Contains(err.Error(), "verdi") {
				t.Errorf("the error %q shows a password", err)
			}
		})
	}
}

func TestTokenUsersFileReadAtEachAttempt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, users := authFiles(t, dir, UsersLine("mario", "rossi"))
	k := authKey(t)
	at := time.Unix(1_800_000_000, 0)
	srv := &ServerAuth{Key: k, UsersPath: users, now: func() time.Time { return at }}
	tok, err := Credentials{User: "toad", Password: "funghi", Key: &k.PublicKey}.Token(at)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Check(tok); !errors.Is(err, ErrUnknownUser) {
		t.Fatalf("before toad is added: %v, want %v", err, ErrUnknownUser)
	}
	if err := os.WriteFile(users, []byte(UsersLine("toad", "funghi")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Check(tok); err != nil {
		t.Fatalf("after toad is added: %v", err)
	}
	if err := os.Remove(users); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Check(tok); err == nil {
		t.Fatal("admitted with the users file gone")
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseTokenText(t *testing.T) {
	tests := []struct {
		in       string
		user, pw string
		ts       int64
		ok       bool
	}{
		{"user: mario\npwd:  rossi\nts:   1800000000", "mario", "rossi", 1800000000, true},
		{"user:mario pwd:rossi ts:-5", "mario", "rossi", -5, true},                 // sscanf's white space: any run, or none
		{"user: mario\npwd:  rossi\nts:   42\x00junk", "mario", "rossi", 42, true}, // a C string ends at NUL
		{"user: mario\npwd:  rossi\nts:   42 and more", "mario", "rossi", 42, true},
		{"user: mario\x00\npwd:  rossi\nts:   42", "", "", 0, false},
		{"user: \npwd:  rossi\nts:   42", "", "", 0, false}, // %s swallows "pwd:": no pwd then
		{"user: mario\npwd:  rossi\nts:   ", "", "", 0, false},
		{"user: mario\npwd:  rossi\nts:   99999999999999999999", "", "", 0, false},
		{"pwd:  rossi\nuser: mario\nts:   42", "", "", 0, false},
		{"", "", "", 0, false},
	}
	for _, tt := range tests {
		user, pw, ts, err := ParseTokenText([]byte(tt.in))
		if (err == nil) != tt.ok || user != tt.user || string(pw) != tt.pw || ts != tt.ts {
			t.Errorf("ParseTokenText(%q) = %q, %q, %d, %v; want %q, %q, %d, ok %v", tt.in, user, pw, ts, err, tt.user, tt.pw, tt.ts, tt.ok)
		}
	}
}

func TestParseUsers(t *testing.T) {
	good := UsersLine("mario", "rossi")
	u, err := ParseUsers([]byte("# users\r\n\r\n" + good + "\r\nno comma here\n,,luigi,,," + strings.Repeat("ab", 32) + ",extra\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 2 || u["mario"] != PasswordHash("mario", "rossi") {
		t.Errorf("users %v: want mario and luigi", u)
	}
	if _, ok := u["luigi"]; !ok {
		t.Error("luigi, whose line has empty fields (strtok skips them), is missing")
	}
	for _, bad := range []struct{ in, want string }{
		{"mario,xyz\n", "line 1: the hash of user \"mario\" is not 64 hex digits"},
		{"# ok\n" + good + "\n" + good + "\n", "line 3: user \"mario\" given twice"},
		{"mario,\n", "line 1: want"},
		{strings.Repeat("x", 2000) + ",a\n", "line 1: longer than"},
	} {
		if _, err := ParseUsers([]byte(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseUsers(%.40q) = %v, want one line with %q", bad.in, err, bad.want)
		}
	}
}

func TestLoadKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	priv, pub, users := authFiles(t, dir)
	k := authKey(t)
	if got, err := LoadPrivateKey(priv); err != nil || !got.Equal(k) {
		t.Fatalf("LoadPrivateKey(PKCS#8) = %v", err)
	}
	if got, err := LoadPublicKey(pub); err != nil || !got.Equal(&k.PublicKey) {
		t.Fatalf("LoadPublicKey(PKIX) = %v", err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p1 := write("pkcs1.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	if got, err := LoadPrivateKey(p1); err != nil || !got.Equal(k) {
		t.Fatalf("LoadPrivateKey(PKCS#1) = %v", err)
	}
	pp1 := write("pkcs1pub.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)}))
	if got, err := LoadPublicKey(pp1); err != nil || !got.Equal(&k.PublicKey) {
		t.Fatalf("LoadPublicKey(PKCS#1) = %v", err)
	}
	badPublic := []struct{ path, want string }{
		{priv, "this is a private key"},
		{users, "no PEM block"},
		{write("big.pem", make([]byte, maxKeyFile+1)), "larger than"},
		{write("cert.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})), "not a PUBLIC KEY"},
		{write("junk.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte("junk")})), "not a PKIX public key"},
		{filepath.Join(dir, "missing.pem"), "no such file"},
	}
	for _, b := range badPublic {
		if _, err := LoadPublicKey(b.path); err == nil || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("LoadPublicKey(%s) = %v, want one line with %q", filepath.Base(b.path), err, b.want)
		}
	}
	badPrivate := []struct{ path, want string }{
		{pub, "this is a public key"},
		{write("enc.pem", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}})), "encrypted with a passphrase"},
		{write("enc1.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00"}, Bytes: []byte{1}})), "encrypted with a passphrase"},
		{write("junk8.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")})), "not a PKCS#8 private key"},
	}
	for _, b := range badPrivate {
		if _, err := LoadPrivateKey(b.path); err == nil || !strings.Contains(err.Error(), b.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("LoadPrivateKey(%s) = %v, want one line with %q", filepath.Base(b.path), err, b.want)
		}
	}
}

func TestCredentialsCheck(t *testing.T) {
	t.Parallel()
	k := authKey(t)
	c := Credentials{User: "mario", Password: "s3cret!", Key: &k.PublicKey}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("%q shows the password", s)
		}
	}
	for _, bad := range []Credentials{
		{User: "ma rio", Password: "x", Key: c.Key},
		{User: "mario", Password: "with space", Key: c.Key},
		{User: "mario", Password: "", Key: c.Key},
		{User: "mario", Password: strings.Repeat("p", 250), Key: c.Key}, // OAEP on 2048 bits carries 214 bytes
		{User: "mario", Password: "x"},
	} {
		if _, err := bad.Token(time.Now()); err == nil {
			t.Errorf("Token for user %q password of %d bytes: no error", bad.User, len(bad.Password))
		}
	}
	long := Credentials{User: "mario", Password: strings.Repeat("p", 200), Key: c.Key, PKCS1: true} // PKCS#1 v1.5: 245
	if _, err := long.Token(time.Now()); err != nil {
		t.Errorf("a 200-byte password with PKCS#1 padding: %v", err)
	}
}

func FuzzParseTokenText(f *testing.F) {
	f.Add([]byte("user: mario\npwd:  rossi\nts:   1800000000"))
	f.Add([]byte("user:\x00pwd:ts:"))
	f.Add([]byte("user: a\npwd: b\nts: -9223372036854775808"))
	f.Fuzz(func(t *testing.T, b []byte) {
		user, pw, _, err := ParseTokenText(b)
		if err != nil {
			return
		}
		if user == "" || len(pw) == 0 || len(user)+len(pw) > len(b) {
			t.Fatalf("ParseTokenText(%q) = %q, %q", b, user, pw)
		}
		if strings.IndexFunc(user, isSpaceOrNUL) >= 0 || strings.IndexFunc(string(pw), isSpaceOrNUL) >= 0 {
			t.Fatalf("a word with white space: %q %q", user, pw)
		}
	})
}

// FuzzServerAuthCheck feeds the server's check tokens as a client may
// send them: it refuses each with an *AuthError, and never panics.
func FuzzServerAuthCheck(f *testing.F) {
	k := authKey(f)
	_, _, users := authFiles(f, f.TempDir(), UsersLine("mario", "rossi"))
	good, err := Credentials{User: "mario", Password: "wrong", Key: &k.PublicKey}.Token(time.Now())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add("")
	f.Add("====")
	f.Add(base64.StdEncoding.EncodeToString(make([]byte, 256)))
	srv := &ServerAuth{Key: k, UsersPath: users}
	f.Fuzz(func(t *testing.T, token string) {
		_, err := srv.Check(token)
		var ae *AuthError
		if !errors.As(err, &ae) {
			t.Fatalf("Check(%.40q) = %v, want an *AuthError", token, err)
		}
	})
}

// iperf3 3.12's server refusing credentials sends SERVER_ERROR and the
// code, without the errno that usually follows, and hangs up: the code
// is kept, and said in iperf3's words.
func TestServerErrorWithoutErrno(t *testing.T) {
	err := readServerError(bytes.NewReader([]byte{0, 0, 0, 142}))
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != errCodeAuth || re.Errno != 0 {
		t.Fatalf("readServerError(code only) = %#v", err)
	}
	if !strings.Contains(err.Error(), "test authorization failed") {
		t.Errorf("%q: want iperf3's \"test authorization failed\"", err)
	}
	err = readServerError(bytes.NewReader([]byte{0, 0, 0, 101, 0, 0, 0, 11}))
	if !errors.As(err, &re) || re.Code != 101 || re.Errno != 11 {
		t.Errorf("readServerError(code and errno) = %#v", err)
	}
}

// iperf3 3.21's server refusing credentials sends the error code its
// previous test left (206, errno 104 seen): said as a likely refusal.
func TestServerErrorAnsweringCredentials(t *testing.T) {
	err := &RemoteError{Code: 206, Errno: 104, AnswersCredentials: true}
	if msg := err.Error(); !strings.Contains(msg, "206") || !strings.Contains(msg, "test authorization failed") {
		t.Errorf("%q: want the code and \"test authorization failed\"", msg)
	}
	if msg := (&RemoteError{Code: 206, Errno: 104}).Error(); strings.Contains(msg, "authorization") {
		t.Errorf("%q: no credentials were sent", msg)
	}
}
