// Package detach starts a server in the background as iperf3's -D does:
// the program starts itself again, with the same arguments, in a session
// of its own without a terminal, and the first process returns once the
// copy is serving or has failed.
//
// A Go program cannot fork without exec (the runtime's threads don't
// survive fork), so the copy is a new process of the same executable. It
// learns it is the copy from an inherited pipe, named in its environment,
// on which it reports once: serving, or the error that stopped it.
package detach

import (
	"errors"
	"os"
	"strconv"
	"sync"
)

// pipeEnv names the copy's end of the readiness pipe (a descriptor
// number). Unset in the copy as soon as it is read, so that nothing the
// copy starts inherits it.
const pipeEnv = "WIREPERF_DETACH_READY_FD"

// Reply lines on the pipe: "serving\n", or "failed: " and the error.
const (
	servingLine = "serving"
	failedLine  = "failed: "
)

// ErrUnsupported is Start's error where the system has no sessions to
// detach into (Windows: run wireperf as a service there).
var ErrUnsupported = errors.New("-D: running in the background needs a Unix system; on Windows run the server as a service")

var (
	childOnce sync.Once
	childPipe *os.File
)

// child returns the copy's end of the pipe, or nil in a process that was
// not started by Start.
func child() *os.File {
	childOnce.Do(func() {
		v, ok := os.LookupEnv(pipeEnv)
		if !ok {
			return
		}
		os.Unsetenv(pipeEnv)
		fd, err := strconv.Atoi(v)
		if err != nil || fd < 3 || fd > 1<<16 {
			return
		}
		childPipe = os.NewFile(uintptr(fd), "detach-ready")
	})
	return childPipe
}

// Child reports whether this process is the copy that Start started.
func Child() bool { return child() != nil }

// Notice is the copy's one report to the process that started it. Its
// methods do nothing in a process that is not the copy, so a command
// calls them either way.
type Notice struct {
	once sync.Once
	pipe *os.File
}

// NewNotice returns the notice of this process.
func NewNotice() *Notice { return &Notice{pipe: child()} }

// Serving tells the first process that the server is serving: it exits
// with status 0.
func (n *Notice) Serving() { n.send(servingLine) }

// Failed tells it why the server stopped before serving: it prints err
// and exits with status 1. After Serving, Failed does nothing: the first
// process is gone, and the error goes to the log.
func (n *Notice) Failed(err error) {
	if err == nil {
		err = errors.New("the server stopped before serving")
	}
	n.send(failedLine + oneLine(err.Error()))
}

func (n *Notice) send(line string) {
	if n == nil || n.pipe == nil {
		return
	}
	n.once.Do(func() {
		_, _ = n.pipe.WriteString(line + "\n")
		_ = n.pipe.Close()
	})
}

// oneLine keeps an error to one line of at most 1 KiB: it is printed on
// the first process's terminal.
func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
		if len(out) >= 1024 {
			break
		}
	}
	return string(out)
}
