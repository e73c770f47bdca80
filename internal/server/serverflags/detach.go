package serverflags

import (
	"time"

	"github.com/wireperf/wireperf/internal/detach"
)

// detachTimeout bounds how long -D waits for the background server to
// listen: key files, a multicast join and the listening sockets take
// milliseconds; a minute means something hangs.
const detachTimeout = time.Minute

// StartsDetached reports whether this process should only start the
// server in the background (-D), rather than serve: false in the
// background copy itself.
func (f *Flags) StartsDetached() bool { return f.Daemon && !detach.Child() }

// StartDetached starts the background server (-D) and returns once it
// listens, with its process ID, or with the error that stopped it.
func StartDetached() (int, error) { return detach.Start(detachTimeout) }

// ServingNotice is what the background copy tells the process that
// started it; it does nothing in a process -D didn't start.
func ServingNotice() *detach.Notice { return detach.NewNotice() }
