//go:build !unix

package main

import "time"

// selfUsage is unknown without getrusage.
func selfUsage() (time.Duration, int64, bool) { return 0, 0, false }
