package iperf3

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine running: a
// client or server that returned must have stopped everything it started.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
