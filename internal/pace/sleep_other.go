//go:build !linux

package pace

import "time"

// preciseSleep is an ordinary sleep where nanosleep is not wired; the
// waiter learns its lateness and spins the rest.
func preciseSleep(d time.Duration) { time.Sleep(d) }
