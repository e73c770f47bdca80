package mcast

import (
	"testing"

	"go.uber.org/goleak"
)

// A receiver and a sender end every goroutine they start.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
