//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

// TestAcceptIperf3ClientCountsOnALongPath: an iperf3 client tests our
// server over the lab's 19 ms, 622 Mbit/s path. What our server says it
// received (iperf3 prints it as its receiver line) must equal what iperf3
// counted as sent (see below for 3.16+): an iperf3 client keeps its streams
// open after TEST_END, so our server has to drain the path's queue and
// the client's socket buffer by itself, and stop once they are empty.
// (That it then cuts no row after the test is checked on loopback, in
// internal/iperf3.)
func TestAcceptIperf3ClientCountsOnALongPath(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-second test over a 19 ms path; skipped with -short")
	}
	bin := iperf3bin.Need(t)
	path := impair.Config{Delay: 9500 * time.Microsecond, Rate: 622e6, Overhead: FramingEthernet.Overhead}
	l := newRouterLab(t, 1500, RouterSpec{AtoB: path, BtoA: path, RandStart: 13}, BigTCPBuffers())
	a, b := l.Host("a"), l.Host("b")
	port := startServer(t, b)
	const secs = 3
	for _, c := range []struct {
		name string
		args []string
	}{
		{"-P 1", nil},
		{"-P 2", []string{"-P", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := append([]string{"-c", b.Addr.String(), "-p", strconv.Itoa(port), "-t", strconv.Itoa(secs), "-J", "-C", "cubic"}, c.args...)
			out, err := a.Run(ctx, bin, args...)
			if err != nil {
				t.Fatalf("iperf3 %v: %v\n%s", args, err, out)
			}
			var doc struct {
				End struct {
					SumSent     struct{ Bytes int64 } `json:"sum_sent"`
					SumReceived struct{ Bytes int64 } `json:"sum_received"`
				} `json:"end"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal(out, &doc); err != nil || doc.Error != "" {
				t.Fatalf("iperf3's document: %v %s\n%s", err, doc.Error, out)
			}
			sent, got := doc.End.SumSent.Bytes, doc.End.SumReceived.Bytes
			t.Logf("iperf3 sent %d bytes; our server received %d", sent, got)
			// iperf3 3.16 and later send from a thread per stream: a write
			// under way as its timer fires reaches the wire but can miss
			// its count (3.21 here: 66 and 91 KB short over 19 ms, never
			// on loopback; 3.12 exact). So our count may exceed iperf3's by
			// at most one write (-l, 128 KiB) per stream, and never fall
			// short of it.
			streams := int64(1)
			if len(c.args) == 2 {
				streams, _ = strconv.ParseInt(c.args[1], 10, 64)
			}
			if sent == 0 || got < sent || got-sent > streams*128<<10 {
				t.Errorf("our server counted %d bytes received; iperf3 counted %d sent (%+d; at most one 128 KiB write a stream above it is iperf3's own miscount)", got, sent, got-sent)
			}
		})
	}
}
