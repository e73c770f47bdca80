package auth

import (
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func writeFile(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKeys(t *testing.T) {
	good := writeFile(t, "# users\nalice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n\nbob\t9b2e7d4a1c6f08e35d7a2b9c4e1f6a03\n", 0o600)
	keys, err := LoadKeys(good)
	if err != nil || len(keys) != 2 || string(keys["bob"]) != "9b2e7d4a1c6f08e35d7a2b9c4e1f6a03" {
		t.Fatalf("LoadKeys = %v, %v", keys, err)
	}
	cred, err := LoadCredential(good)
	if err != nil || cred.User != "alice" {
		t.Fatalf("LoadCredential = %+v, %v", cred, err)
	}
	bad := []struct {
		name, body string
		mode       os.FileMode
		want       string
	}{
		{"empty", "# nothing\n", 0o600, "holds no key"},
		{"short key", "alice short\n", 0o600, "shorter than"},
		{"three fields", "alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8 extra\n", 0o600, "want `name key`"},
		{"twice", "a 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\na 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n", 0o600, "listed twice"},
		{"weak key", "alice aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 0o600, "line 1: weak key"},
		{"80 bits", "alice 0123456789abcdef0123\n", 0o600, "80 bits as hex"},
	}
	if runtime.GOOS != "windows" {
		bad = append(bad, struct {
			name, body string
			mode       os.FileMode
			want       string
		}{"readable by others", "alice 0123456789abcdef0123\n", 0o644, "readable by others"})
	}
	for _, b := range bad {
		if _, err := LoadKeys(writeFile(t, b.body, b.mode)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want %q", b.name, err, b.want)
		}
	}
	if _, err := LoadKeys(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestChallengeResponse(t *testing.T) {
	keys := Keys{"alice": []byte("0123456789abcdef0123")}
	sn, _ := Nonce()
	cn, _ := Nonce()
	proof := ClientProof(keys["alice"], sn, cn, "alice")
	if _, ok := keys.Verify("alice", sn, cn, proof); !ok {
		t.Fatal("the right answer was refused")
	}
	other, _ := Nonce()
	if _, ok := keys.Verify("alice", other, cn, proof); ok {
		t.Fatal("an answer replayed against a fresh challenge was accepted")
	}
	if _, ok := keys.Verify("bob", sn, cn, ClientProof([]byte("0123456789abcdef0123"), sn, cn, "bob")); ok {
		t.Fatal("an unknown user was accepted")
	}
	if _, ok := keys.Verify("alice", sn, cn, ServerProof(keys["alice"], sn, cn, "alice")); ok {
		t.Fatal("the server's proof was accepted as the client's")
	}
	cred := &Credential{User: "alice", Key: keys["alice"]}
	if !cred.CheckServerProof(sn, cn, ServerProof(keys["alice"], sn, cn, "alice")) {
		t.Fatal("the server's proof was refused")
	}
}

func TestACL(t *testing.T) {
	p := func(s string) netip.Prefix {
		x, err := ParsePrefix(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	acl := ACL{Allow: []netip.Prefix{p("10.0.0.0/8"), p("2001:db8::/32")}, Deny: []netip.Prefix{p("10.9.0.0/16")}}
	for addr, want := range map[string]bool{
		"10.1.2.3": true, "10.9.1.1": false, "192.0.2.1": false, "2001:db8::1": true, "::ffff:10.1.2.3": true,
	} {
		if got := acl.Check(netip.MustParseAddr(addr)) == nil; got != want {
			t.Errorf("Check(%s) admits = %v, want %v", addr, got, want)
		}
	}
	if (ACL{}).Check(netip.MustParseAddr("192.0.2.1")) != nil {
		t.Error("an empty list refused")
	}
	if _, err := ParsePrefix("10.0.0.0/33"); err == nil {
		t.Error("a bad prefix parsed")
	}
	if got := p("127.0.0.1"); got.Bits() != 32 {
		t.Errorf("a bare address is /%d, want /32", got.Bits())
	}
}

func TestDatagramKey(t *testing.T) {
	sn, _ := Nonce()
	cn, _ := Nonce()
	s := &Session{User: "alice", Key: []byte("0123456789abcdef0123"), ServerNonce: sn, ClientNonce: cn}
	tok := [16]byte{1, 2, 3}
	k := s.DatagramKey(tok)
	if len(k) != 32 || string(k) != string(s.DatagramKey(tok)) {
		t.Fatalf("key %x: not 32 bytes, or not the same at both ends", k)
	}
	other := tok
	other[15] = 9
	fresh, _ := Nonce()
	for name, k2 := range map[string][]byte{
		"other test":  s.DatagramKey(other),
		"other nonce": (&Session{User: "alice", Key: s.Key, ServerNonce: fresh, ClientNonce: cn}).DatagramKey(tok),
		"other key":   (&Session{User: "alice", Key: []byte("fedcba9876543210fedc"), ServerNonce: sn, ClientNonce: cn}).DatagramKey(tok),
	} {
		if string(k2) == string(k) {
			t.Errorf("%s: same datagram key", name)
		}
	}
	if (*Session)(nil).DatagramKey(tok) != nil {
		t.Error("no session, yet a key")
	}
}
