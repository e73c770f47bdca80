//go:build !linux

package cpuaffinity

import (
	"fmt"
	"runtime"
)

// Pin refuses: a test's CPU affinity is set on Linux only.
func Pin(cpu int) (restore func(), err error) {
	return nil, fmt.Errorf("-A %d: CPU affinity is set on Linux only, not on %s", cpu, runtime.GOOS)
}
