package authflags

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/iperf3"
)

// iperf3KeyFiles writes an RSA key pair as openssl writes them.
func iperf3KeyFiles(t *testing.T) (priv, pub string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pkix, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "private.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}))),
		writeFile(t, "public.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix})))
}

func TestIperf3ClientFlags(t *testing.T) {
	_, pub := iperf3KeyFiles(t)
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == PasswordEnv {
				return v
			}
			return ""
		}
	}
	noTerminal := func() ([]byte, error) {
		return nil, errors.New("no password: set IPERF3_PASSWORD, or run on a terminal to be asked")
	}
	if cred, err := (&Iperf3Client{getenv: env("")}).Load(); cred != nil || err != nil {
		t.Errorf("without flags: %v, %v; want none", cred, err)
	}
	cred, err := (&Iperf3Client{User: "mario", PublicKey: pub, PKCS1: true, getenv: env("rossi"), terminal: noTerminal}).Load()
	if err != nil || cred.User != "mario" || cred.Password != "rossi" || !cred.PKCS1 || cred.Key == nil {
		t.Fatalf("from the environment: %v, %v", cred, err)
	}
	cred, err = (&Iperf3Client{User: "mario", PublicKey: pub, getenv: env(""), terminal: func() ([]byte, error) { return []byte("typed\n"), nil }}).Load()
	if err != nil || cred.Password != "typed" {
		t.Fatalf("from the terminal: %v, %v", cred, err)
	}
	for _, bad := range []struct {
		c    Iperf3Client
		want string
	}{
		{Iperf3Client{User: "mario"}, "--username and --rsa-public-key-path go together"},
		{Iperf3Client{PublicKey: pub}, "--username and --rsa-public-key-path go together"},
		{Iperf3Client{PKCS1: true}, "--username and --rsa-public-key-path go together"},
		{Iperf3Client{User: "mario", PublicKey: writeFile(t, "x.pem", "junk")}, "--rsa-public-key-path: "},
		{Iperf3Client{User: "mario", PublicKey: pub, terminal: noTerminal}, "--username: no password: set IPERF3_PASSWORD"},
		{Iperf3Client{User: "ma rio", PublicKey: pub}, "--username: the user name must be one word"},
	} {
		if bad.c.getenv == nil {
			bad.c.getenv = env("")
			if bad.c.terminal == nil {
				bad.c.getenv = env("secret")
			}
		}
		_, err := bad.c.Load()
		if err == nil || !strings.HasPrefix(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%+v: %v, want one line starting %q", bad.c.User, err, bad.want)
		}
	}
}

func TestIperf3ServerFlags(t *testing.T) {
	priv, pub := iperf3KeyFiles(t)
	users := writeFile(t, "users.csv", iperf3.UsersLine("mario", "rossi")+"\n")
	parse := func(args ...string) (*iperf3.ServerAuth, error) {
		var s Iperf3Server
		fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
		s.Register(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return s.Load()
	}
	if a, err := parse(); a != nil || err != nil {
		t.Errorf("without flags: %v, %v; want none", a, err)
	}
	a, err := parse("--rsa-private-key-path", priv, "--authorized-users-path", users)
	if err != nil || a.Skew != iperf3.DefaultSkewThreshold || a.PKCS1 || a.UsersPath != users {
		t.Fatalf("defaults: %+v, %v", a, err)
	}
	a, err = parse("--rsa-private-key-path", priv, "--authorized-users-path", users, "--time-skew-threshold", "30", "--use-pkcs1-padding")
	if err != nil || a.Skew != 30*time.Second || !a.PKCS1 {
		t.Fatalf("--time-skew-threshold 30 --use-pkcs1-padding: %+v, %v", a, err)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--rsa-private-key-path", priv}, "--rsa-private-key-path and --authorized-users-path go together"},
		{[]string{"--authorized-users-path", users}, "--rsa-private-key-path and --authorized-users-path go together"},
		{[]string{"--rsa-private-key-path", pub, "--authorized-users-path", users}, "--rsa-private-key-path: "},
		{[]string{"--rsa-private-key-path", priv, "--authorized-users-path", writeFile(t, "bad.csv", "mario,nothex\n")}, "--authorized-users-path: "},
		{[]string{"--rsa-private-key-path", priv, "--authorized-users-path", users + ".missing"}, "--authorized-users-path: "},
		{[]string{"--time-skew-threshold", "0"}, "invalid argument"},
		{[]string{"--time-skew-threshold", "1.5"}, "invalid argument"},
		{[]string{"--time-skew-threshold", "-3"}, "invalid argument"},
	} {
		_, err := parse(bad.args...)
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", bad.args, err, bad.want)
		}
	}
}
