//go:build linux

package lab

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// routerRTPriority is the SCHED_FIFO priority of the router process: the
// lowest real-time one, above every ordinary process but below the
// kernel's own real-time threads.
const routerRTPriority = 1

// raiseProcessPriority puts every thread of this process in the SCHED_FIFO
// class (falling back to nice -20 where that is not allowed) and returns
// what it did.
//
// The router stands for a network, which on a real path does not share a
// CPU with the hosts it carries. On a busy 2-core machine an ordinary
// router process is descheduled for tens of milliseconds at a time; the
// packets wait in the TUN queue and then reach the emulator at once, so
// that it sees them arrive far faster than they were sent and its rate
// cap's queue drops them. Real-time scheduling lets it run as soon as a
// packet or a departure is due. It never spins, so it takes only the CPU
// its traffic needs (and the kernel's real-time throttling caps even a
// bug at 95% of each CPU).
//
// Threads inherit the class when they are created, so it is enough to set
// it on each thread that exists; the loop repeats until no new thread has
// appeared.
func raiseProcessPriority() (string, error) {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: routerRTPriority}
	done := map[int]bool{}
	for round := 0; round < 10; round++ {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return "", err
		}
		added := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
				if err == unix.ESRCH {
					continue
				}
				// Not allowed (no CAP_SYS_NICE, or an RT budget of 0 in
				// this cgroup): the strongest ordinary priority instead.
				if err2 := unix.Setpriority(unix.PRIO_PROCESS, 0, -20); err2 != nil {
					return "", fmt.Errorf("lab: router priority: SCHED_FIFO: %v; nice: %v", err, err2)
				}
				for _, e := range ents {
					if t, err := strconv.Atoi(e.Name()); err == nil {
						_ = unix.Setpriority(unix.PRIO_PROCESS, t, -20)
					}
				}
				return fmt.Sprintf("nice -20 (SCHED_FIFO refused: %v)", err), nil
			}
			done[tid], added = true, true
		}
		if !added {
			break
		}
	}
	return fmt.Sprintf("SCHED_FIFO priority %d", routerRTPriority), nil
}
