//go:build !linux

package sockopt

import (
	"fmt"
	"runtime"
	"syscall"
)

// FlowLabelControl refuses: only Linux lets a socket choose its IPv6
// flow label (iperf3's -L is Linux only too).
func FlowLabelControl(label int, _ func(string, string, syscall.RawConn) error) func(string, string, syscall.RawConn) error {
	return func(string, string, syscall.RawConn) error {
		return fmt.Errorf("-L %d: IPv6 flow labels can be set on Linux only, not on %s", label, runtime.GOOS)
	}
}
