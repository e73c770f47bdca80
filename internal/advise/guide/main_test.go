package guide

import (
	"testing"

	"go.uber.org/goleak"
)

// The guided runs must leave nothing running once their server has shut
// down.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
