package authflags

import (
	"crypto/sha256"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/testutil/tlstest"
)

const aliceKey = "alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A pin accepts the certificate whose SHA-256 it is, with or without
// colons, and refuses any other one.
func TestClientPinChecksTheCertificate(t *testing.T) {
	_, cert := tlstest.SelfSigned(t)
	_, other := tlstest.SelfSigned(t)
	sum := sha256.Sum256(cert.Raw)
	hexPin := fmt.Sprintf("%x", sum)
	var colons []string
	for i := 0; i < len(hexPin); i += 2 {
		colons = append(colons, hexPin[i:i+2])
	}
	for _, pin := range []string{hexPin, strings.Join(colons, ":")} {
		tc, err := (&Client{TLSPin: pin}).TLSConfig("h")
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.VerifyPeerCertificate([][]byte{cert.Raw}, nil); err != nil {
			t.Errorf("pin %s: the pinned certificate refused: %v", pin, err)
		}
		if err := tc.VerifyPeerCertificate([][]byte{other.Raw}, nil); err == nil || !strings.Contains(err.Error(), "not the pinned one") {
			t.Errorf("pin %s: another certificate: %v", pin, err)
		}
		if err := tc.VerifyPeerCertificate(nil, nil); err == nil {
			t.Errorf("pin %s: no certificate accepted", pin)
		}
	}
}

// A CA file is trusted for the host named; a file without a certificate,
// both ways at once or a short pin is an error naming the flag.
func TestClientTLSConfig(t *testing.T) {
	_, cert := tlstest.SelfSigned(t)
	ca := writeFile(t, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})))
	tc, err := (&Client{TLSCA: ca}).TLSConfig("127.0.0.1")
	if err != nil || tc.RootCAs == nil || tc.ServerName != "127.0.0.1" {
		t.Fatalf("--tls-ca: %+v, %v", tc, err)
	}
	if tc, err := (&Client{}).TLSConfig("h"); tc != nil || err != nil {
		t.Errorf("no TLS flags: %v, %v; want no TLS", tc, err)
	}
	for _, c := range []struct {
		flags Client
		want  string
	}{
		{Client{TLSCA: ca, TLSPin: "ab"}, "choose one"},
		{Client{TLSCA: writeFile(t, "empty.pem", "no certificate")}, "no PEM certificate"},
		{Client{TLSCA: filepath.Join(t.TempDir(), "missing")}, "--tls-ca"},
		{Client{TLSPin: "abcd"}, "64 digits"},
	} {
		if _, err := c.flags.TLSConfig("h"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.want)
		}
	}
	cred, _, err := (&Client{KeyFile: writeFile(t, "key", aliceKey)}).Load("h")
	if err != nil || cred == nil {
		t.Errorf("--auth-key-file: %v, %v", cred, err)
	}
}

func TestServerLoad(t *testing.T) {
	keys, acl, tc, err := (&Server{KeyFile: writeFile(t, "keys", aliceKey), Allow: []string{"10.0.0.0/8"}, Deny: []string{"10.1.0.0/16"}}).Load()
	if err != nil || len(keys) != 1 || len(acl.Allow) != 1 || len(acl.Deny) != 1 || tc != nil {
		t.Fatalf("keys %v, acl %+v, tls %v, err %v", keys, acl, tc, err)
	}
	for _, c := range []struct {
		flags Server
		want  string
	}{
		{Server{Allow: []string{"10.0.0.0/33"}}, "--allow"},
		{Server{Deny: []string{"nonsense"}}, "--deny"},
		{Server{TLSCert: "c.pem"}, "go together"},
		{Server{TLSCert: "missing.pem", TLSKey: "missing.key"}, "missing.pem"},
	} {
		if _, _, _, err := c.flags.Load(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.want)
		}
	}
}

func TestAgentLoad(t *testing.T) {
	keys := writeFile(t, "keys", aliceKey)
	if a, err := (&Agent{}).Load(); a != nil || err != nil {
		t.Errorf("no --agent: %v, %v", a, err)
	}
	a, err := (&Agent{On: true, KeyFile: keys, ClientKeyFile: keys}).Load()
	if err != nil || len(a.Keys) != 1 || a.ClientCred == nil {
		t.Fatalf("agent %+v, %v", a, err)
	}
	for _, c := range []struct {
		flags Agent
		want  string
	}{
		{Agent{KeyFile: keys}, "--agent-key-file needs --agent"},
		{Agent{ClientKeyFile: keys}, "--client-key-file needs --agent"},
		{Agent{On: true}, "--agent needs --agent-key-file"},
		{Agent{On: true, KeyFile: keys, ClientKeyFile: filepath.Join(t.TempDir(), "missing")}, "--client-key-file"},
	} {
		if _, err := c.flags.Load(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.flags, err, c.want)
		}
	}
}
