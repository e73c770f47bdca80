//go:build !linux

package hostmon

import (
	"errors"
	"net/netip"
	"testing"
)

func TestFallbacksUnsupported(t *testing.T) {
	tests := []struct {
		name string
		call func() error
	}{
		{"ReadLimits", func() error { _, err := ReadLimits(); return err }},
		{"ReadUDP", func() error { _, err := ReadUDP(); return err }},
		{"ReadIP", func() error { _, err := ReadIP(); return err }},
		{"ReadCPUStat", func() error { _, err := ReadCPUStat(); return err }},
		{"ReadInterrupts", func() error { _, err := ReadInterrupts(); return err }},
		{"ReadRootQdisc", func() error { _, err := ReadRootQdisc(netip.MustParseAddr("127.0.0.1")); return err }},
	}
	for _, tt := range tests {
		if err := tt.call(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", tt.name, err)
		}
	}
}
