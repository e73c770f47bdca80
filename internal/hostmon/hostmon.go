// Package hostmon reads the host counters wireperf reports beside a test:
// the process's CPU time, per-CPU time split and interrupts (to see which
// core did the network work), UDP/IP drop counters (to tell loss in the
// host from loss in the network) and the kernel's socket buffer limits.
//
// The /proc parsers are portable and strict: malformed input is an error,
// never a panic or a silently wrong number.
package hostmon

import (
	"errors"
	"fmt"
)

// ErrUnsupported is wrapped by the readers that need Linux's /proc when
// they run on another operating system; errors.Is(err,
// errors.ErrUnsupported) holds for it too.
var ErrUnsupported = fmt.Errorf("%w on this operating system", errors.ErrUnsupported)
