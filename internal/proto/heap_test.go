package proto

import "runtime"

// heapAlloc is the bytes allocated so far, over the whole run.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}
