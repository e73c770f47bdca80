package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of /proc/PID/stat's times (USER_HZ, 100 on
// every Linux this runs on).
const clockTicks = 100

// procStat reads a process's parent, its own CPU ticks (utime+stime) and
// its reaped children's (cutime+cstime), and its command's name.
func procStat(pid int) (comm string, ppid int, own, children int64, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, 0, 0, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return "", 0, 0, 0, false
	}
	comm = s[open+1 : close]
	f := strings.Fields(s[close+1:]) // f[0] is field 3, the state
	if len(f) < 15 {
		return "", 0, 0, 0, false
	}
	num := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
	return comm, int(num(4)), num(14) + num(15), num(16) + num(17), true
}

// postgresCPU is the CPU time of the PostgreSQL server one of whose
// backends is pid: its postmaster's own and reaped children's, and its
// live children's. A pid that is not a postgres process here (a server
// on another machine, or in another PID namespace) is unknown.
func postgresCPU(backend int) (time.Duration, bool) {
	comm, postmaster, _, _, ok := procStat(backend)
	if !ok || comm != "postgres" {
		return 0, false
	}
	_, _, own, reaped, ok := procStat(postmaster)
	if !ok {
		return 0, false
	}
	ticks := own + reaped
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, own, _, ok := procStat(pid); ok && ppid == postmaster {
			ticks += own
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, true
}

// processCPU is a process's own CPU time (user and system).
func processCPU(pid int) (time.Duration, bool) {
	_, _, own, _, ok := procStat(pid)
	return time.Duration(own) * time.Second / clockTicks, ok
}
