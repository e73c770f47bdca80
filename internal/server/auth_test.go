package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/tlstest"
)

func testKeys() auth.Keys {
	return auth.Keys{"alice": []byte("0123456789abcdef0123"), "bob": []byte("fedcba9876543210fedc")}
}

func runWith(ts *testServer, s spec.Spec, mutate func(*session.ClientConfig)) (*result.Result, error) {
	cfg := session.ClientConfig{ClientConfig: control.ClientConfig{Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s}}
	mutate(&cfg)
	return session.RunClient(context.Background(), cfg)
}

func TestAuthentication(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Keys = testKeys() })
	tests := []struct {
		name string
		cred *auth.Credential
		ok   bool
	}{
		{"right key", &auth.Credential{User: "bob", Key: []byte("fedcba9876543210fedc")}, true},
		{"no key", nil, false},
		{"wrong key", &auth.Credential{User: "alice", Key: []byte("fedcba9876543210fedc")}, false},
		{"unknown user", &auth.Credential{User: "mallory", Key: []byte("0123456789abcdef0123")}, false},
	}
	for _, tt := range tests {
		_, err := runWith(ts, quickSpec(), func(c *session.ClientConfig) { c.Auth = tt.cred })
		if tt.ok && err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !tt.ok && !errors.Is(err, auth.ErrFailed) {
			t.Fatalf("%s: err = %v, want authentication failed", tt.name, err)
		}
	}
	waitFor(t, func() bool { return ts.Stats().AuthFailed == 3 })
}

func TestAllowDeny(t *testing.T) {
	tests := []struct {
		acl  auth.ACL
		want string
	}{
		{auth.ACL{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, "outside every --allow prefix"},
		{auth.ACL{Deny: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "--deny 127.0.0.0/8"},
		{auth.ACL{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, ""},
	}
	for _, tt := range tests {
		ts := startServer(t, func(c *Config) { c.ACL = tt.acl })
		_, err := ts.run(t, quickSpec())
		switch {
		case tt.want == "" && err != nil:
			t.Fatalf("%+v: %v", tt.acl, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Fatalf("%+v: err = %v, want %q", tt.acl, err, tt.want)
		}
	}
}

// TLS on the control connection, with keys over it; a plain client is
// refused with the reason.
func TestTLSControl(t *testing.T) {
	cert, parsed := tlstest.SelfSigned(t)
	ts := startServer(t, func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
		c.Keys = testKeys()
	})
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	cred := &auth.Credential{User: "alice", Key: []byte("0123456789abcdef0123")}
	for _, reverse := range []bool{false, true} {
		s := quickSpec()
		s.Reverse = reverse
		if _, err := runWith(ts, s, func(c *session.ClientConfig) {
			c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
			c.Auth = cred
		}); err != nil {
			t.Fatalf("over TLS (reverse %v): %v", reverse, err)
		}
	}
	_, err := runWith(ts, quickSpec(), func(c *session.ClientConfig) { c.Auth = cred })
	if err == nil || !strings.Contains(err.Error(), "requires TLS") {
		t.Fatalf("plain client: err = %v, want the TLS requirement", err)
	}
}
