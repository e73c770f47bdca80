// Package cpuaffinity pins the process to one CPU for a test, as
// iperf3's -A does (sched_setaffinity of the process).
package cpuaffinity
