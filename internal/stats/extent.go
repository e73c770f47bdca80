package stats

// RFC 4737 extent. For a re-ordered datagram with number s arriving at
// arrival index j, the extent is j - i, where i is the arrival index of the
// earliest arrival with a number greater than s. That earliest arrival
// always set a new running maximum (had an earlier one been greater, it
// would be the earliest), so only record-setting arrivals are kept: their
// indices and numbers both increase, and a binary search finds i.
//
// In-order traffic makes every arrival a record, so records are kept as
// runs: arrival idx+k carried number seq+k for k < n. A run breaks only at a
// gap in the numbers (loss or re-ordering) or in the indices (a re-ordered
// arrival between two records), so a clean stream is one run.

type run struct {
	idx int64  // arrival index of the run's first record
	seq uint64 // its number
	n   int64  // records in the run
}

func (r *run) last() uint64 { return r.seq + uint64(r.n) - 1 }

type extentTracker struct {
	runs    ring[run]
	maxRuns int
	// truncated is set once runs were dropped for memory: an extent that
	// would reach behind the oldest kept run is then a lower bound.
	truncated bool
}

// record notes that the arrival at index idx set a new maximum, seq.
func (e *extentTracker) record(idx int64, seq uint64) {
	if e.runs.len() > 0 {
		if r := e.runs.back(); r.idx+r.n == idx && r.last()+1 == seq {
			r.n++
			return
		}
	}
	if e.runs.len() >= e.maxRuns {
		e.runs.popFront()
		e.truncated = true
	}
	e.runs.pushBack(run{idx: idx, seq: seq, n: 1})
}

// extent returns the extent of a re-ordered arrival: number seq (below the
// running maximum) at arrival index idx.
func (e *extentTracker) extent(idx int64, seq uint64) int64 {
	// First run whose last number is above seq; it exists, since the
	// newest record is the running maximum.
	i, j := 0, e.runs.len()
	for i < j {
		m := int(uint(i+j) >> 1)
		if e.runs.at(m).last() > seq {
			j = m
		} else {
			i = m + 1
		}
	}
	if i == e.runs.len() {
		return 0 // not below the maximum: not re-ordered
	}
	r := e.runs.at(i)
	first := r.idx // the run starts above seq
	if r.seq <= seq {
		first += int64(seq + 1 - r.seq)
	}
	return idx - first
}

// trim forgets runs entirely below lowest: only a missing number can be
// re-ordered, and none below lowest is still missing, so those runs can
// never be the answer. The newest run stays, to be extended.
func (e *extentTracker) trim(lowest uint64) {
	for e.runs.len() > 1 && e.runs.front().last() < lowest {
		e.runs.popFront()
	}
}
