package sockopt

import (
	"errors"
	"fmt"
	"runtime"
)

// unsupported is the error for an option this operating system has no
// per-socket equivalent for. It wraps errors.ErrUnsupported so callers can
// tell "not here" from "refused".
func unsupported(name string, value any) error {
	return setErr(name, value, fmt.Errorf("not available on %s: %w", runtime.GOOS, errors.ErrUnsupported))
}
