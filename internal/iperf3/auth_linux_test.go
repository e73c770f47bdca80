package iperf3

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// iperf3PKCS1Only says whether the iperf3 under test pads its token
// with PKCS#1 v1.5 only: OAEP (and --use-pkcs1-padding) came in 3.17.
func iperf3PKCS1Only(t *testing.T) bool {
	t.Helper()
	return iperf3Older(t, 3, 17)
}

// iperf3AuthArgs are the padding flag a case asks iperf3's server for,
// where the iperf3 under test has one.
func iperf3AuthArgs(t *testing.T, pkcs1 bool) []string {
	if pkcs1 && !iperf3PKCS1Only(t) {
		return []string{"--use-pkcs1-padding"}
	}
	return nil
}

// TestServeIperf3ClientAuth runs iperf3's own client with its
// credentials against our server: the right password runs the test;
// a wrong one, an unknown user and a stale timestamp are refused with
// iperf3's "test authorization failed", as the iperf3 client prints it.
func TestServeIperf3ClientAuth(t *testing.T) {
	t.Parallel()
	needIperf3(t)
	dir := t.TempDir()
	priv, pub, users := authFiles(t, dir, "# iperf3's format", UsersLine("mario", "rossi"))
	key, err := LoadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	// iperf3 before 3.17 pads with PKCS#1 v1.5 only; 3.17 and later
	// with OAEP, and their client refuses --use-pkcs1-padding ("some
	// option you are trying to set is server only", 3.21): the padding
	// the iperf3 under test can send is the one tested.
	paddings := []bool{iperf3PKCS1Only(t)}
	tests := []struct {
		name, user, password string
		clock                time.Duration // the server's clock ahead of the client's
		want                 error
	}{
		{"admitted", "mario", "rossi", 0, nil},
		{"wrong password", "mario", "luigi", 0, ErrWrongPassword},
		{"unknown user", "peach", "rossi", 0, ErrUnknownUser},
		{"stale timestamp", "mario", "rossi", DefaultSkewThreshold + 20*time.Second, ErrStale},
	}
	for _, pkcs1 := range paddings {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/pkcs1=%v", tt.name, pkcs1), func(t *testing.T) {
				t.Parallel()
				srv := newTestServer(t, func(c *ServeConfig) {
					c.Auth = &ServerAuth{Key: key, UsersPath: users, PKCS1: pkcs1,
						now: func() time.Time { return time.Now().Add(tt.clock) }}
				})
				args := []string{"-c", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-J", "-t", "1",
					"--username", tt.user, "--rsa-public-key-path", pub}
				p := startIperf3Env(t, 30*time.Second, []string{"IPERF3_PASSWORD=" + tt.password}, args...)
				doc := p.json(t)
				sr := srv.next(t)
				if tt.want == nil {
					checkIperf3Client(t, sr, doc)
					return
				}
				var ae *AuthError
				if !errors.As(sr.err, &ae) || !errors.Is(sr.err, tt.want) || sr.res != nil {
					t.Fatalf("Serve = %v, want an *AuthError of %v and no test", sr.err, tt.want)
				}
				if ae.User != tt.user {
					t.Errorf("refused user %q, want %q", ae.User, tt.user)
				}
				if e, _ := doc["error"].(string); e != "test authorization failed" {
					t.Errorf("the iperf3 client's error is %q, want iperf3's \"test authorization failed\"", e)
				}
				if strings.Contains(srv.logs.String(), tt.password) {
					t.Errorf("the server's log shows the password:\n%s", srv.logs.String())
				}
			})
		}
	}
}

// TestClientAuthAgainstIperf3Server runs our client with credentials
// against iperf3's server started with --rsa-private-key-path and
// --authorized-users-path: the right password runs the test, a wrong
// one ends in one line that says authorization failed.
func TestClientAuthAgainstIperf3Server(t *testing.T) {
	t.Parallel()
	needIperf3(t)
	dir := t.TempDir()
	priv, pub, users := authFiles(t, dir, UsersLine("mario", "rossi"))
	pubKey, err := LoadPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	paddings := []bool{true}
	if !iperf3PKCS1Only(t) {
		paddings = []bool{false, true}
	}
	for _, pkcs1 := range paddings {
		for _, password := range []string{"rossi", "wrong"} {
			t.Run(fmt.Sprintf("%s/pkcs1=%v", password, pkcs1), func(t *testing.T) {
				t.Parallel()
				srv, port := startIperf3Server(t, append([]string{"--rsa-private-key-path", priv, "--authorized-users-path", users}, iperf3AuthArgs(t, pkcs1)...)...)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cred := &Credentials{User: "mario", Password: password, Key: pubKey, PKCS1: pkcs1 || iperf3PKCS1Only(t)}
				s := clientSpec(func(s *spec.Spec) { s.Duration = time.Second })
				res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s, Auth: cred})
				if password == "rossi" {
					if err != nil {
						t.Fatalf("RunClient: %v", err)
					}
					checkAgainstIperf3Server(t, res, srv.json(t))
					return
				}
				if err == nil {
					t.Fatal("a wrong password ran the test")
				}
				msg := err.Error()
				if !strings.Contains(msg, "test authorization failed") || strings.Contains(msg, "\n") || strings.Contains(msg, password) {
					t.Errorf("error %q: want one line saying \"test authorization failed\", without the password", msg)
				}
			})
		}
	}
}

// TestServeIperf3ClientAuthWithoutKeys: a server without iperf3's keys
// runs the test of a client that sends credentials, as iperf3's does.
func TestServeIperf3ClientAuthWithoutKeys(t *testing.T) {
	t.Parallel()
	needIperf3(t)
	_, pub, _ := authFiles(t, t.TempDir())
	srv := newTestServer(t, nil)
	p := startIperf3Env(t, 30*time.Second, []string{"IPERF3_PASSWORD=rossi"}, "-c", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-J", "-t", "1",
		"--username", "mario", "--rsa-public-key-path", pub)
	doc := p.json(t)
	checkIperf3Client(t, srv.next(t), doc)
}
