// Package connectplan is a TCP-connect run as a user asks for it (count,
// interval, timeout, address family) with its defaults, limits and
// checks; internal/tcpconnect runs one.
package connectplan

import (
	"fmt"
	"time"
)

// Defaults and limits.
const (
	DefaultCount    = 10
	DefaultInterval = time.Second
	DefaultTimeout  = 3 * time.Second
	MaxCount        = 100000
	MinInterval     = 10 * time.Millisecond
)

// Config is one run.
type Config struct {
	Count    int
	Interval time.Duration // between the starts of two attempts
	Timeout  time.Duration // of one attempt
	// Family is "tcp", "tcp4" or "tcp6".
	Family string
}

// DefaultConfig is 10 attempts a second apart, 3 s each at most.
func DefaultConfig() Config {
	return Config{Count: DefaultCount, Interval: DefaultInterval, Timeout: DefaultTimeout, Family: "tcp"}
}

// Check checks a config's values.
func (c Config) Check() error {
	if c.Count < 1 || c.Count > MaxCount {
		return fmt.Errorf("--count %d: want 1 to %d", c.Count, MaxCount)
	}
	if c.Interval < MinInterval || c.Interval > time.Hour {
		return fmt.Errorf("--interval %v: want %v to 1h", c.Interval, MinInterval)
	}
	if c.Timeout <= 0 || c.Timeout > time.Minute {
		return fmt.Errorf("--timeout %v: want more than 0, at most 1m", c.Timeout)
	}
	switch c.Family {
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("address family %q: want tcp, tcp4 or tcp6", c.Family)
	}
	return nil
}

// Bound is how long a run takes at most.
func (c Config) Bound() time.Duration {
	return time.Duration(c.Count-1)*c.Interval + c.Timeout
}
