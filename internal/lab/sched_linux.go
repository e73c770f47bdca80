//go:build linux

package lab

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// routerRTPriority is the SCHED_FIFO priority of the router's threads: the
// lowest real-time one, above every ordinary thread but below the kernel's
// own real-time threads.
const routerRTPriority = 1

// lockRouterThread locks the calling goroutine to its OS thread for good
// and raises that thread, and only it, to SCHED_FIFO (or, where that is
// not allowed, to nice -20). The goroutine must end without unlocking, so
// that Go ends the thread with it rather than run other goroutines at
// that priority. It returns what it did.
//
// The router stands for a network, which on a real path does not share a
// CPU with the hosts it carries. On a busy 2-core machine an ordinary
// thread is descheduled for tens of milliseconds at a time: packets then
// wait in the TUN queue and reach the emulator at once, faster than they
// were sent, so that its rate cap's queue drops them, and departures leave
// late, which shows as jitter the path does not have. A real-time thread
// runs as soon as a packet or a departure is due. The router's threads
// never spin, so they take only the CPU their traffic needs (and the
// kernel's real-time throttling caps even a bug at 95% of each CPU).
func lockRouterThread() string {
	runtime.LockOSThread()
	tid := unix.Gettid()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: routerRTPriority}
	err := unix.SchedSetAttr(tid, &attr, 0)
	if err == nil {
		return fmt.Sprintf("SCHED_FIFO priority %d", routerRTPriority)
	}
	if err2 := unix.Setpriority(unix.PRIO_PROCESS, tid, -20); err2 != nil {
		return fmt.Sprintf("ordinary (SCHED_FIFO: %v; nice -20: %v)", err, err2)
	}
	return fmt.Sprintf("nice -20 (SCHED_FIFO: %v)", err)
}

// raiseProcessPriority puts every thread of this process in the SCHED_FIFO
// class (falling back to nice -20 where that is not allowed) and returns
// what it did.
//
// RunRouter calls it in the router's own process (`wireperf lab router`):
// lockRouterThread raises only the threads that move packets, but they
// still wait for the Go runtime's own threads now and then (a garbage
// collection stops every goroutine until its ordinary-priority workers
// have run), and on a busy machine that was enough for a few thousand
// rate-queue drops in 30 s of 750 Mbit/s; with every thread raised, none.
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
