package daemon

import (
	"os/exec"
	"syscall"
)

// childDiesWithUs has the kernel stop a test if the daemon dies (SIGKILL,
// a crash): its run is recorded aborted when the daemon comes back, and no
// test goes on unrecorded. The signal follows the thread that started the
// child, which runTest keeps locked until the child exits.
func childDiesWithUs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
