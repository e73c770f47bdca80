package session

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestThreadsShareNetns(t *testing.T) {
	if !threadsShareNetns() {
		t.Fatal("a test's own goroutine is not in the process's network namespace")
	}
	if os.Geteuid() != 0 {
		t.Skip("moving a thread into a new network namespace needs root")
	}
	got := make(chan bool)
	go func() {
		// The thread stays locked: the runtime ends it with the goroutine
		// rather than reuse it in the new namespace.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			t.Errorf("unshare: %v", err)
			got <- true
			return
		}
		got <- threadsShareNetns()
	}()
	if <-got {
		t.Error("a thread in a new network namespace shares the process's")
	}
}
