package udpflow

import (
	"testing"
	"time"
)

func TestCoalesceWait(t *testing.T) {
	for _, c := range []struct {
		name              string
		msgs, batch, size int
		kernel            bool
		want              time.Duration
	}{
		{"a GSO read that emptied the queue", 3, 32, 3 * 65000, true, coalesceDelay},
		{"exactly the threshold", 1, 32, coalesceBytes, true, coalesceDelay},
		{"one byte short", 1, 32, coalesceBytes - 1, true, 0},
		{"a full batch leaves more queued", 32, 32, 32 * 65000, true, 0},
		{"stamped at read time", 3, 32, 3 * 65000, false, 0},
		{"a low rate", 2, 32, 2 * 1448, true, 0},
	} {
		if got := coalesceWait(c.msgs, c.batch, c.size, c.kernel); got != c.want {
			t.Errorf("%s: coalesceWait(%d, %d, %d, %v) = %v, want %v", c.name, c.msgs, c.batch, c.size, c.kernel, got, c.want)
		}
	}
}
