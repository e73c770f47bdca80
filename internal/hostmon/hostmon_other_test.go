//go:build !linux

package hostmon

import (
	"errors"
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
	}
	for _, tt := range tests {
		if err := tt.call(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", tt.name, err)
		}
	}
}
