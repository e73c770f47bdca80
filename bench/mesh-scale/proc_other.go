//go:build !linux

package main

import "time"

// postgresCPU is unknown off Linux: there is no /proc to read it from.
func postgresCPU(int) (time.Duration, bool) { return 0, false }

// processCPU is unknown off Linux.
func processCPU(int) (time.Duration, bool) { return 0, false }
