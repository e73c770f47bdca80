package hostmon

import (
	"fmt"
	"os"
)

// ReadInterrupts reads the per-CPU interrupt counts from /proc/interrupts.
func ReadInterrupts() ([]IRQLine, error) {
	data, err := os.ReadFile("/proc/interrupts")
	if err != nil {
		return nil, err
	}
	l, err := ParseInterrupts(data)
	if err != nil {
		return nil, fmt.Errorf("/proc/interrupts: %w", err)
	}
	return l, nil
}
