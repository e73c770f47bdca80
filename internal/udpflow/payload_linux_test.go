package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// TestRepeatingPayloadOnTheWire: with --repeating-payload every datagram
// read on a plain loopback socket keeps its header (its stream and
// sequence) and carries iperf3's pattern after it, from the offset the
// header ends at, as iperf3's datagrams do; without it the body is
// zeros.
func TestRepeatingPayloadOnTheWire(t *testing.T) {
	for _, repeating := range []bool{true, false} {
		const size, count = 1200, 50
		a, b := loopback.UDPPair(t)
		_ = b.SetReadBuffer(1 << 20)
		s, err := NewSender(a, SenderConfig{StreamID: 7, Size: size, GSO: true, RepeatingPayload: repeating})
		if err != nil {
			t.Fatal(err)
		}
		s.Start(time.Now(), &countdown{left: count * size})
		<-s.Done()
		want := make([]byte, size-HeaderLen)
		if repeating {
			spec.RepeatingPattern(want, HeaderLen)
		}
		_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 65536)
		for i := uint64(0); i < count; i++ {
			n, err := b.Read(buf)
			if err != nil || n != size {
				t.Fatalf("datagram %d: %d bytes, %v", i, n, err)
			}
			if h, err := Parse(buf[:n]); err != nil || h.StreamID != 7 || h.Seq != i {
				t.Fatalf("datagram %d: header %+v, %v: the fill reached the header", i, h, err)
			}
			if body := buf[HeaderLen:n]; string(body) != string(want) {
				t.Fatalf("repeating %v, datagram %d: body starts %q, want %q", repeating, i, body[:20], want[:20])
			}
		}
	}
}
