package agent

import "golang.org/x/sys/unix"

// From <sys/timex.h>: adjtimex's return value when the clock is not
// synchronised, and the status bit that says so.
const (
	timeError = 5
	staUnsync = 0x0040
)

func localClockSync() ClockSync {
	var tx unix.Timex // Modes 0: read only
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return ClockSync{}
	}
	return ClockSync{
		Known:      true,
		Synced:     state != timeError && tx.Status&staUnsync == 0,
		MaxErrorNs: int64(tx.Maxerror) * 1000, // µs
		EstErrorNs: int64(tx.Esterror) * 1000,
	}
}
