//go:build linux

package lab

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// A signal sent to `lab exec` reaches the command it runs: the command
// traps SIGTERM and exits 7; without the signal it gives up after about
// five seconds with status 3.
func TestRunForwardingPassesSignalsOn(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd := exec.Command("sh", "-c", `trap 'exit 7' TERM; echo ready; i=0; while [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; exit 3`)
	cmd.Stdout = w
	sigs := make(chan os.Signal, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		if strings.TrimSpace(line) == "ready" {
			sigs <- syscall.SIGTERM
		}
	}()
	err = runForwarding(cmd, sigs)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("runForwarding = %v; want the command's exit status 7 from its SIGTERM trap", err)
	}
}

// `lab down` of a lab that is not up says so, rather than "is down".
func TestDownUnknownLabFails(t *testing.T) {
	old := StateDir
	StateDir = t.TempDir()
	defer func() { StateDir = old }()
	err := Down("nosuch-wp-test")
	if err == nil || !strings.Contains(err.Error(), `no lab named "nosuch-wp-test" is up`) {
		t.Fatalf("Down(nosuch) = %v; want an error saying no such lab is up", err)
	}
}
