//go:build unix

package detach

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Start starts this executable again with this process's arguments and
// environment, in a new session (no controlling terminal, so a closed
// terminal's SIGHUP doesn't reach it) with standard input, output and
// error on /dev/null (the server's --logfile is where its output goes),
// in the same working directory (relative paths in its flags keep their
// meaning; iperf3's daemon(3) moves to /, which they would not survive).
// It waits up to timeout for the copy's notice and returns the copy's
// process ID once it is serving, or the error it reported.
func Start(timeout time.Duration) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("-D: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("-D: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), pipeEnv+"=3") // ExtraFiles[0] is descriptor 3
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, fmt.Errorf("-D: %w", err)
	}
	w.Close() // the copy holds the only writer now: its exit is EOF
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReaderSize(r, 2048).ReadString('\n')
		line <- strings.TrimSuffix(s, "\n")
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var got string
	select {
	case got = <-line:
	case <-timer.C:
		_ = cmd.Process.Kill()
		return 0, fmt.Errorf("-D: the server did not report serving within %v; stopped it", timeout)
	}
	switch {
	case got == servingLine:
		return cmd.Process.Pid, nil
	case strings.HasPrefix(got, failedLine):
		waitBriefly(exited)
		return 0, errors.New(strings.TrimPrefix(got, failedLine))
	}
	// EOF without a notice: the copy died before it could say why.
	if err := waitBriefly(exited); err != nil {
		return 0, fmt.Errorf("-D: the server stopped before serving (%v)", err)
	}
	return 0, errors.New("-D: the server stopped before serving")
}

// waitBriefly returns the copy's exit error once it has exited, or nil
// after a second: a copy that reported failure exits at once.
func waitBriefly(exited <-chan error) error {
	select {
	case err := <-exited:
		return err
	case <-time.After(time.Second):
		return nil
	}
}
