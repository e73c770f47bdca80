package hostmon

import "time"

// CPUTimes is the process's CPU time at a moment (getrusage RUSAGE_SELF) with the wall clock.
type CPUTimes struct {
	User, System time.Duration
	Wall         time.Time
}

// Usage returns user, system and total CPU between two samples as percent of one core (can exceed 100).
// It returns zeros when b is not after a, and clamps a component that went
// backwards to zero, so a misordered pair cannot show negative load.
func Usage(a, b CPUTimes) (user, system, total float64) {
	wall := b.Wall.Sub(a.Wall)
	if wall <= 0 {
		return 0, 0, 0
	}
	pct := func(d time.Duration) float64 {
		if d < 0 {
			return 0
		}
		return 100 * float64(d) / float64(wall)
	}
	user = pct(b.User - a.User)
	system = pct(b.System - a.System)
	return user, system, user + system
}
