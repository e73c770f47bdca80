package iperf3

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// Our UDP sender to iperf3 peers, with --repeating-payload: each
// datagram read on a plain loopback socket has iperf3's header (its
// sequence numbers in order) and after it the pattern from the offset
// the header ends at, as iperf3 3.21's own datagrams; without the flag
// the body is not the pattern.
func TestIperf3UDPRepeatingPayloadOnTheWire(t *testing.T) {
	for _, counters64 := range []bool{false, true} {
		for _, repeating := range []bool{true, false} {
			const size, count = 1000, 20
			a, b := loopback.UDPPair(t)
			s := spec.Default()
			s.Protocol, s.Length, s.RepeatingPayload = spec.UDP, size, repeating
			u := newUDPStream(a, true, counters64, s)
			u.start(time.Now(), flowrun.NewBudget(count*size))
			<-u.done
			h := HeaderLen(counters64)
			want := make([]byte, size-h)
			spec.RepeatingPattern(want, h)
			_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 2048)
			for i := 0; i < count; i++ {
				n, err := b.Read(buf)
				if err != nil || n != size {
					t.Fatalf("datagram %d: %d bytes, %v", i, n, err)
				}
				if hdr, err := ParseUDPHeader(buf[:n], counters64); err != nil || hdr.Seq != uint64(i+1) {
					t.Fatalf("datagram %d: header %+v, %v", i, hdr, err)
				}
				if got := string(buf[h:n]) == string(want); got != repeating {
					t.Fatalf("64-bit %v, repeating %v, datagram %d: body starts %q", counters64, repeating, i, buf[h:h+12])
				}
			}
		}
	}
}
