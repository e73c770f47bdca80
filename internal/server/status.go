package server

import "runtime/metrics"

// heapStatus reads the runtime's heap figures for the status line. The
// heap the last collection found live is what a leak grows; the heap's
// objects (live and not yet swept) and the collector's goal are what the
// process's RSS follows, which moves with the collector's timing as much
// as with what is held.
type heapStatus struct{ samples []metrics.Sample }

func newHeapStatus() *heapStatus {
	return &heapStatus{samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}}
}

// read returns the status line's heap attributes as key, value pairs.
func (h *heapStatus) read() []any {
	metrics.Read(h.samples)
	v := func(i int) uint64 {
		if h.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0 // a runtime without the metric
		}
		return h.samples[i].Value.Uint64()
	}
	return []any{"heap_live_bytes", v(0), "heap_objects_bytes", v(1), "heap_goal_bytes", v(2), "gc_cycles", v(3)}
}
