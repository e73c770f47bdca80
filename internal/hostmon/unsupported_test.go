package hostmon

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrUnsupportedIsTheStandardOne(t *testing.T) {
	err := fmt.Errorf("UDP counters need Linux /proc/net/snmp: %w", ErrUnsupported)
	if !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%v does not wrap errors.ErrUnsupported and ErrUnsupported", err)
	}
}
