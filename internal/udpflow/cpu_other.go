//go:build !linux

package udpflow

import "time"

// threadCPU is unknown here.
func threadCPU() time.Duration { return -1 }
