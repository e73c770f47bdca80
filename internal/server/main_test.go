package server

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave nothing running once its server has shut down.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
