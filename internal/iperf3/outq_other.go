//go:build !linux

package iperf3

import (
	"errors"

	"github.com/wireperf/wireperf/internal/tcpflow"
)

// unsentBytes is known on Linux only; elsewhere settleTCP does not wait.
func unsentBytes(*tcpflow.Stream) (int, error) { return 0, errors.ErrUnsupported }
