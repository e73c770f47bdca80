package impair

// entry is one scheduled packet.
type entry[P any] struct {
	at      int64  // release time, ns
	seq     uint64 // arrival number within the direction
	size    int
	dup     bool // leaves twice
	reorder bool // held back when due
	pkt     P
}

func (e *entry[P]) before(o *entry[P]) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// releaseQueue orders scheduled packets by release time. When release times
// can only grow with arrival order (no jitter, or jitter with KeepOrder) it
// is a ring-buffer FIFO; otherwise a binary min-heap on (time, arrival).
type releaseQueue[P any] struct {
	heap bool
	// FIFO ring: buf[head], buf[head+1], ... n entries, len(buf) a power of two.
	buf  []entry[P]
	head int
	n    int
	// heap storage when heap is set.
	h []entry[P]
}

func (q *releaseQueue[P]) len() int {
	if q.heap {
		return len(q.h)
	}
	return q.n
}

func (q *releaseQueue[P]) peek() *entry[P] {
	if q.heap {
		if len(q.h) == 0 {
			return nil
		}
		return &q.h[0]
	}
	if q.n == 0 {
		return nil
	}
	return &q.buf[q.head]
}

func (q *releaseQueue[P]) push(e entry[P]) {
	if q.heap {
		q.h = append(q.h, e)
		q.up(len(q.h) - 1)
		return
	}
	if q.n == len(q.buf) {
		nb := make([]entry[P], max(64, 2*len(q.buf)))
		for i := 0; i < q.n; i++ {
			nb[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = e
	q.n++
}

func (q *releaseQueue[P]) pop() entry[P] {
	var zero entry[P]
	if q.heap {
		e := q.h[0]
		last := len(q.h) - 1
		q.h[0] = q.h[last]
		q.h[last] = zero
		q.h = q.h[:last]
		if last > 0 {
			q.down(0)
		}
		q.shrinkHeap()
		return e
	}
	e := q.buf[q.head]
	q.buf[q.head] = zero // drop the reference to the packet
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	if q.n == 0 {
		q.head = 0
		if len(q.buf) > 1<<16 {
			q.buf = nil // give back a large ring once drained
		}
	}
	return e
}

func (q *releaseQueue[P]) shrinkHeap() {
	if cap(q.h) > 1<<16 && len(q.h) < cap(q.h)/8 {
		q.h = append([]entry[P](nil), q.h...)
	}
}

func (q *releaseQueue[P]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].before(&q.h[p]) {
			return
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *releaseQueue[P]) down(i int) {
	n := len(q.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && q.h[r].before(&q.h[l]) {
			m = r
		}
		if !q.h[m].before(&q.h[i]) {
			return
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
}
