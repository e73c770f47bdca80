//go:build !linux

package hostmon

import "fmt"

// ReadInterrupts needs Linux's /proc/interrupts.
func ReadInterrupts() ([]IRQLine, error) {
	return nil, fmt.Errorf("interrupt counts need Linux /proc/interrupts: %w", ErrUnsupported)
}
