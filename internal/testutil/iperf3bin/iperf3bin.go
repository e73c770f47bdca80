// Package iperf3bin finds the iperf3 that tests run against: one rule for
// every package that compares itself with iperf3. Only tests import it.
package iperf3bin

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// Env names an iperf3 to use instead of the one on PATH (a build of the
// newest release, for example).
const Env = "IPERF3"

// Path is the iperf3 the tests run: $IPERF3 when set, else iperf3 on
// PATH; "" when that one is not an executable file.
func Path() string {
	name := "iperf3"
	if p := os.Getenv(Env); p != "" {
		name = p
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// Need returns Path, or skips t when there is none. Call it from the
// test's own goroutine: a skip from another goroutine ends only that one.
func Need(t testing.TB) string {
	t.Helper()
	p := Path()
	if p == "" {
		t.Skip("iperf3 is not installed (apt-get install iperf3, or set " + Env + ")")
	}
	return p
}

// MPTCP says whether the iperf3 at path takes -m (--mptcp): 3.19 and
// later, built where the C library knows IPPROTO_MPTCP. Its help text
// lists the flag exactly then.
func MPTCP(path string) bool {
	out, err := exec.Command(path, "--help").CombinedOutput()
	return err == nil && bytes.Contains(out, []byte("--mptcp"))
}
