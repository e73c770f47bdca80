package cli

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// clientKeyFile is a key file a client takes.
func clientKeyFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte("alice 4c1f0b3e8a9d27f65e0c1a7b93d4f2e8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A client with a key, against a server that asks for none and accepts
// the test (so proves nothing), stops with one line and status 1, and
// never starts the test. The daemon's scheduled tests run this same
// command.
func TestClientWithAKeyRefusesAnUnprovenServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	started := make(chan bool, 1)
	go func() {
		sawStart := false
		defer func() { started <- sawStart }()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := proto.ReadGreeting(c, proto.MagicControl); err != nil {
			return
		}
		if proto.WriteGreetingFlags(c, proto.MagicServer, 0) != nil {
			return
		}
		for {
			fr, err := proto.ReadFrame(c)
			if err != nil {
				return
			}
			switch fr.Type {
			case proto.TypeTestRequest:
				_ = proto.WriteFrame(c, proto.TypeTestAccept, proto.TestAccept{Token: strings.Repeat("cd", 16)})
			case proto.TypeStart:
				sawStart = true
			}
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code, _, stderr := runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "--auth-key-file", clientKeyFile(t))
	if code != ExitFailed || !strings.Contains(stderr, "authentication failed") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want 1 and one line of authentication failed", code, stderr)
	}
	if <-started {
		t.Error("the test was started")
	}
}

// A client with a key, against iperf3: refused with status 1, whether it
// found iperf3 on its own or was told (--iperf3); iperf3 cannot prove a
// key.
func TestClientWithAKeyRefusesIperf3(t *testing.T) {
	bin := iperf3bin.Need(t)
	port := strconv.Itoa(loopback.FreePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "-s", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = srv.Wait() }()
	key := clientKeyFile(t)
	var code int
	var stderr string
	for try := 0; try < 50; try++ { // until iperf3 listens
		code, _, stderr = runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "--connect-timeout", "5", "--auth-key-file", key)
		if !strings.Contains(stderr, "connection refused") {
			break
		}
		time.Sleep(20 * time.Millisecond) // bounded poll: until iperf3 listens, at most 50 tries
	}
	if code != ExitFailed || !strings.Contains(stderr, "authentication failed") || !strings.Contains(stderr, "iperf3") || strings.Contains(stderr, "switching") {
		t.Errorf("found on its own: exit %d, stderr %q; want 1 and authentication failed", code, stderr)
	}
	code, _, stderr = runCLI("-c", "127.0.0.1", "-p", port, "-t", "1", "--iperf3", "--auth-key-file", key)
	if code != ExitFailed || !strings.Contains(stderr, "authentication failed") {
		t.Errorf("--iperf3: exit %d, stderr %q; want 1 and authentication failed", code, stderr)
	}
}
