package session

import (
	"os"
	"syscall"
)

// threadsShareNetns reports whether a new goroutine's sockets open in the
// caller's network namespace: false when the caller runs on a thread
// locked into another namespace than the process's (as the impairment
// lab's tests run a client inside a host), where only the caller's own
// thread reaches the server.
func threadsShareNetns() bool {
	self, err1 := os.Stat("/proc/thread-self/ns/net")
	proc, err2 := os.Stat("/proc/self/ns/net")
	if err1 != nil || err2 != nil {
		return false
	}
	a, ok1 := self.Sys().(*syscall.Stat_t)
	b, ok2 := proc.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Ino == b.Ino && a.Dev == b.Dev
}
