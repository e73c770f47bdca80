package lab

import (
	"os"
	"os/exec"
)

// runForwarding starts cmd, passes every signal that arrives on sigs on
// to it, and returns when it has exited. A wrapper such as `lab exec`
// that did not would leave its command running when a script or a
// process manager stops the wrapper.
func runForwarding(cmd *exec.Cmd, sigs <-chan os.Signal) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-exited:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(exited)
	<-forwarded
	return err
}
