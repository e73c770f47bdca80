package stats

// ring is a FIFO that can also be read by position. The receiver keeps its
// sorted deques (missing ranges, record runs) in rings: items enter at the
// back in increasing order and leave from the front, so a ring stays sorted
// and can be binary-searched. It grows by doubling and never shrinks, so a
// stream that has reached its working size no longer allocates.
type ring[T any] struct {
	buf  []T // len(buf) is 0 or a power of two
	head int // position of the front in buf
	n    int
}

func (r *ring[T]) len() int { return r.n }

// at returns the i-th item from the front, 0 <= i < len.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

func (r *ring[T]) front() *T { return r.at(0) }

func (r *ring[T]) back() *T { return r.at(r.n - 1) }

func (r *ring[T]) pushBack(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring[T]) popFront() {
	var zero T
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
}

func (r *ring[T]) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 16
	}
	buf := make([]T, size)
	for i := 0; i < r.n; i++ {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}
