package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/testutil/loopback"
)

// BenchmarkSendLoop is the sender's loop, unpaced, on loopback: ns/op and
// allocs/op are per datagram, system calls included (the receiving
// socket is not read; the kernel drops what overflows it).
func BenchmarkSendLoop(b *testing.B) {
	for _, gso := range []bool{false, true} {
		name := "sendmmsg"
		if gso {
			name = "GSO"
		}
		b.Run(name, func(b *testing.B) {
			const size = 1448
			tx, _ := loopback.UDPPair(b)
			s, err := NewSender(tx, SenderConfig{StreamID: 1, Size: size, GSO: gso})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			s.Start(time.Now(), &countdown{left: b.N * size})
			<-s.Done()
			b.StopTimer()
			if s.Sent() != int64(b.N) {
				b.Fatalf("sent %d of %d: %v", s.Sent(), b.N, s.Err())
			}
		})
	}
}
