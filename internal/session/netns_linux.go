package session

import (
	"os"
	"syscall"
)

// processNetns is the network namespace the process started in, read on
// the main thread at start-up, before any thread could have moved.
// (/proc/self names the main thread, which a test may itself move.)
var processNetns, processNetnsOK = netnsOfThread()

func netnsOfThread() (ino uint64, ok bool) {
	fi, err := os.Stat("/proc/thread-self/ns/net")
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}

// threadsShareNetns reports whether a new goroutine's sockets open in the
// caller's network namespace: false when the caller runs on a thread
// locked into another namespace than the process's (as the impairment
// lab's tests run a client inside a host), where only the caller's own
// thread reaches the server. The runtime starts new threads in the
// process's namespace, whichever thread asks for them.
func threadsShareNetns() bool {
	cur, ok := netnsOfThread()
	return ok && processNetnsOK && cur == processNetns
}
