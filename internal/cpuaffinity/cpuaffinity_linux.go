package cpuaffinity

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pin pins every thread of the process to cpu, and threads started
// later with them (a new thread inherits its creator's mask); restore
// puts back the mask the process had. A Go program runs a test on many
// threads, so pinning one thread would leave the test's work on others:
// the process's threads are what iperf3's single process is.
func Pin(cpu int) (restore func(), err error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("-A %d: reading the CPU affinity: %w", cpu, err)
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := setAll(&set); err != nil {
		_ = setAll(&old)
		return nil, fmt.Errorf("-A %d: %w", cpu, err)
	}
	return func() { _ = setAll(&old) }, nil
}

// setAll sets the mask of every thread of the process. A thread that
// ends meanwhile is no error.
func setAll(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}
