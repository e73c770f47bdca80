// Package pingplan is an ICMP echo run as a user asks for it (count,
// interval, size, timeout, socket and address family) with its defaults,
// limits and checks; internal/ping runs one.
package pingplan

import (
	"fmt"
	"time"
)

// Defaults and limits.
const (
	DefaultCount    = 10
	DefaultInterval = time.Second
	DefaultSize     = 56 // ping's: 64 bytes of ICMP
	DefaultTimeout  = 2 * time.Second
	MaxCount        = 65535 // one sequence number each
	MaxSize         = 65000
	// MinInterval is the shortest interval between requests, as ping
	// allows a user who is not root (200 ms); root gets 10 ms.
	MinInterval = 10 * time.Millisecond
)

// Config is one ping run.
type Config struct {
	Count    int
	Interval time.Duration
	Size     int           // bytes of data in each request, after the ICMP header
	Timeout  time.Duration // how long the last request waits for its reply
	Raw      bool          // a raw socket instead of a ping socket
	// Family is "ip4", "ip6" or "ip" (IPv4 when the host has an IPv4
	// address, else IPv6).
	Family string
}

// DefaultConfig is 10 requests a second apart, 56 bytes of data each.
func DefaultConfig() Config {
	return Config{Count: DefaultCount, Interval: DefaultInterval, Size: DefaultSize, Timeout: DefaultTimeout, Family: "ip"}
}

// Check checks a config's values.
func (c Config) Check() error {
	if c.Count < 1 || c.Count > MaxCount {
		return fmt.Errorf("--count %d: want 1 to %d", c.Count, MaxCount)
	}
	if c.Interval < MinInterval || c.Interval > time.Hour {
		return fmt.Errorf("--interval %v: want %v to 1h", c.Interval, MinInterval)
	}
	if c.Size < 0 || c.Size > MaxSize {
		return fmt.Errorf("--size %d: want 0 to %d", c.Size, MaxSize)
	}
	if c.Timeout <= 0 || c.Timeout > time.Minute {
		return fmt.Errorf("--timeout %v: want more than 0, at most 1m", c.Timeout)
	}
	switch c.Family {
	case "ip", "ip4", "ip6":
	default:
		return fmt.Errorf("address family %q: want ip, ip4 or ip6", c.Family)
	}
	return nil
}

// Bound is how long a run takes at most.
func (c Config) Bound() time.Duration {
	return time.Duration(c.Count-1)*c.Interval + c.Timeout
}
