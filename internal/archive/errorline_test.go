package archive

import (
	"errors"
	"testing"
)

func TestErrorLine(t *testing.T) {
	t.Parallel()
	if got := ErrorLine(errors.New("  first\nsecond\n")); got != "first; second" {
		t.Fatalf("%q", got)
	}
}
