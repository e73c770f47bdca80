package iperf3

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// iperf3Path is the iperf3 the tests run (iperf3bin: $IPERF3, else the
// one on PATH, Debian's in CI), else a build of the latest release.
var iperf3Path = findIperf3()

// listenWait bounds the wait for an iperf3 server to bind its port: a
// hang guard, left as soon as it listens. 5 s was too short beside
// make test's race pass on a 2-vCPU VM (one start in five -race runs
// of this package at a load average of 40 to 50 missed it).
const listenWait = 30 * time.Second

func findIperf3() string {
	if p := iperf3bin.Path(); p != "" {
		return p
	}
	return iperf3Latest
}

func needIperf3(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(iperf3Path); err != nil {
		t.Skip("iperf3 is not installed at " + iperf3Path + " (apt-get install iperf3, or set " + iperf3bin.Env + ")")
	}
}

// iperfProc is a running iperf3 process whose output is kept.
type iperfProc struct {
	cmd    *exec.Cmd
	stdout syncbuf.Buffer // read while it runs (waitOutput)
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// startIperf3 runs iperf3 with args for at most limit; t.Cleanup kills it.
func startIperf3(t *testing.T, limit time.Duration, args ...string) *iperfProc {
	t.Helper()
	return startIperf3Env(t, limit, nil, args...)
}

// startIperf3Env is startIperf3 with env added to the environment.
func startIperf3Env(t *testing.T, limit time.Duration, env []string, args ...string) *iperfProc {
	t.Helper()
	needIperf3(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	p := &iperfProc{cmd: exec.CommandContext(ctx, iperf3Path, args...), done: make(chan struct{})}
	if env != nil {
		p.cmd.Env = append(os.Environ(), env...)
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); cancel(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to exit and returns its JSON output.
func (p *iperfProc) json(t *testing.T) map[string]any {
	t.Helper()
	<-p.done
	var doc map[string]any
	if err := json.Unmarshal(p.stdout.Bytes(), &doc); err != nil {
		t.Fatalf("iperf3 %v: output is not JSON (%v; exit %v)\nstdout: %s\nstderr: %s", p.cmd.Args[1:], err, p.err, p.stdout.String(), p.stderr.String())
	}
	return doc
}

// startIperf3Server starts `iperf3 -s -1 -J` on a free port and waits until
// it listens (a probe connection would use up the one-shot server).
func startIperf3Server(t *testing.T, extra ...string) (*iperfProc, int) {
	t.Helper()
	for try := 0; ; try++ {
		port := loopback.FreePort(t)
		args := append([]string{"-s", "-1", "-J", "-p", strconv.Itoa(port)}, extra...)
		p := startIperf3(t, 30*time.Second, args...)
		deadline := time.Now().Add(listenWait)
		for !listening(port) {
			select {
			case <-p.done: // lost the port to someone else: try another
				if try == 5 {
					t.Fatalf("iperf3 server did not start: %s", p.stdout.String())
				}
			default:
				if time.Now().After(deadline) {
					t.Fatalf("iperf3 server did not listen on %d", port)
				}
				time.Sleep(10 * time.Millisecond) // bounded poll: the port iperf3 binds, until the deadline above
				continue
			}
			break
		}
		if listening(port) {
			return p, port
		}
	}
}

// listening scans /proc/net/tcp{,6} for a listening socket on port.
func listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
				fh.Close()
				return true
			}
		}
		fh.Close()
	}
	return false
}

// waitOutput waits, at most limit, until the process has printed want
// (run iperf3 with --forceflush, or its lines wait in its stdio buffer).
func (p *iperfProc) waitOutput(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(p.stdout.String(), want) {
		select {
		case <-p.done:
			t.Fatalf("iperf3 %v exited without printing %q: %v\nstdout: %s\nstderr: %s", p.cmd.Args[1:], want, p.err, p.stdout.String(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("iperf3 %v printed no %q within %v; stdout: %s", p.cmd.Args[1:], want, limit, p.stdout.String())
		}
		time.Sleep(10 * time.Millisecond) // bounded poll: the process's output, until the deadline above
	}
}

// iperf3Older says whether the iperf3 the tests run is older than
// major.minor (by its --version line, "iperf 3.12 (cJSON …)"); an
// unreadable version counts as older, the stricter case.
func iperf3Older(t *testing.T, major, minor int) bool {
	t.Helper()
	out, err := exec.Command(iperf3Path, "--version").Output()
	if err != nil {
		return true
	}
	var ma, mi int
	if _, err := fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "iperf "), "%d.%d", &ma, &mi); err != nil {
		return true
	}
	return ma < major || ma == major && mi < minor
}
