package agent

// ClockSync is what a host's kernel says of its own clock: whether a
// synchronisation daemon (NTP, PTP) keeps it, and the kernel's bounds on
// its error. Known is false where the system offers no way to ask.
type ClockSync struct {
	Known      bool  `json:"known"`
	Synced     bool  `json:"synced"`
	MaxErrorNs int64 `json:"max_error_ns,omitempty"`
	EstErrorNs int64 `json:"est_error_ns,omitempty"`
}

// LocalClockSync asks the kernel about this host's clock.
func LocalClockSync() ClockSync { return localClockSync() }
