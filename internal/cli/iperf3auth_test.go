package cli

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/auth/authflags"
	"github.com/wireperf/wireperf/internal/iperf3"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

// iperf3AuthFiles writes an RSA key pair as `openssl genrsa` and
// `openssl rsa -pubout` write them, and a users file admitting mario
// with the password rossi.
func iperf3AuthFiles(t *testing.T) (priv, pub, users string) {
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
	dir := t.TempDir()
	priv, pub, users = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem"), filepath.Join(dir, "users.csv")
	for name, body := range map[string][]byte{
		priv:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}),
		pub:   pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix}),
		users: []byte(iperf3.UsersLine("mario", "rossi") + "\n"),
	} {
		if err := os.WriteFile(name, body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return priv, pub, users
}

// iperf3PKCS1Only says whether bin pads its credentials with PKCS#1
// v1.5 only (iperf3 before 3.17, which has no OAEP and no
// --use-pkcs1-padding).
func iperf3PKCS1Only(t *testing.T, bin string) bool {
	t.Helper()
	out, err := exec.Command(bin, "--version").Output()
	var major, minor int
	if err == nil {
		_, err = fmt.Sscanf(strings.TrimPrefix(string(out), "iperf "), "%d.%d", &major, &minor)
	}
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	return major == 3 && minor < 17
}

// Our client against an iperf3 server that requires iperf3's
// credentials: the right password runs the test; a wrong one stops
// with one line saying authorization failed, and exit 1.
func TestClientIperf3AuthAgainstIperf3Server(t *testing.T) {
	bin := iperf3bin.Need(t)
	priv, pub, users := iperf3AuthFiles(t)
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Not -1: iperf3 3.21's one-off server exits on a refused client.
	srv := exec.CommandContext(ctx, bin, "-s", "-p", port, "--rsa-private-key-path", priv, "--authorized-users-path", users)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = srv.Wait() }()
	args := []string{"-c", "127.0.0.1", "-p", port, "-t", "1", "--iperf3", "--connect-timeout", "5", "--username", "mario", "--rsa-public-key-path", pub}
	if iperf3PKCS1Only(t, bin) {
		args = append(args, "--use-pkcs1-padding")
	}
	t.Setenv(authflags.PasswordEnv, "rossi")
	// A refused connection is tried again: iperf3 may not listen yet, and
	// after a test its server listens again only once it has reset
	// (CI's second run met "connection refused" there).
	run := func() (code int, stdout, stderr string) {
		for try := 0; try < 50; try++ { // until iperf3 listens
			code, stdout, stderr = runCLI(args...)
			if !strings.Contains(stderr, "connection refused") {
				break
			}
			time.Sleep(20 * time.Millisecond) // bounded poll: until iperf3 listens, at most 50 tries
		}
		return code, stdout, stderr
	}
	code, stdout, stderr := run()
	if code != 0 || !strings.Contains(stdout, "receiver") {
		t.Fatalf("the right password: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	t.Setenv(authflags.PasswordEnv, "verdi")
	code, _, stderr = run()
	line := strings.TrimSpace(stderr)
	if code != ExitFailed || !strings.Contains(line, "test authorization failed") || strings.Contains(line, "\n") || strings.Contains(line, "verdi") {
		t.Errorf("a wrong password: exit %d, stderr %q; want 1 and one line saying test authorization failed", code, stderr)
	}
}

// A server with --auth-key-file and iperf3's credentials serves both
// kinds of client: iperf3's with its password, ours with its key; an
// iperf3 client without credentials is refused with iperf3's message.
func TestServerAdmitsIperf3CredentialsBesideKeys(t *testing.T) {
	bin := iperf3bin.Need(t)
	priv, pub, users := iperf3AuthFiles(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := iperf3PKCS1Only(t, bin)
	flags := authflags.Iperf3Server{PrivateKey: priv, Users: users, PKCS1: pkcs1}
	ip3, err := flags.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := loopserver.Start(t, func(c *server.Config) { c.Keys, c.Iperf3Auth = keys, ip3 })
	port := strconv.Itoa(srv.Addr().Port)
	iperf3Client := func(password string, extra ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"-c", "127.0.0.1", "-p", port, "-t", "1"}, extra...)...)
		cmd.Env = append(os.Environ(), authflags.PasswordEnv+"="+password)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := iperf3Client("rossi", "--username", "mario", "--rsa-public-key-path", pub); err != nil || !strings.Contains(out, "receiver") {
		t.Errorf("iperf3 with the right password: %v\n%s", err, out)
	}
	for _, extra := range [][]string{{"--username", "mario", "--rsa-public-key-path", pub}, nil} {
		if out, err := iperf3Client("verdi", extra...); err == nil || !strings.Contains(out, "test authorization failed") {
			t.Errorf("iperf3 %v with a wrong password: %v\n%s; want iperf3's \"test authorization failed\"", extra, err, out)
		}
	}
	if code, _, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "--auth-key-file", keyFile); code != 0 {
		t.Errorf("wireperf with its key: exit %d, %s", code, stderr)
	}
	// The two refusals count as failed authentications, which slow their
	// source as wrong keys do.
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().AuthFailed < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // bounded poll: the server counts a refusal once its handler returns
	}
	if n := srv.Stats().AuthFailed; n != 2 {
		t.Errorf("server stats: %d authentications failed, want 2", n)
	}
}
