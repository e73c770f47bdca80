package serverflags

import (
	"testing"

	"go.uber.org/goleak"
)

// The servers these tests start must leave nothing running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
