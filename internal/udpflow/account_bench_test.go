package udpflow

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/stats"
)

// BenchmarkAccount is the receive hot path after the socket: one GRO batch
// of 64 datagrams a call, parsed and counted (ns/op is per datagram).
func BenchmarkAccount(b *testing.B) {
	const size, batch = 1448, 64
	r, err := newTestReceiver(ReceiverConfig{Token: [16]byte{1}, StreamID: 1, Size: size})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, batch*size)
	segs := make([]Segment, batch)
	h := Header{Token: [16]byte{1}, StreamID: 1}
	for i := range segs {
		h.Put(buf[i*size:])
		segs[i] = Segment{Payload: buf[i*size : (i+1)*size], Shared: i > 0}
	}
	r.epoch = time.Now()
	b.ReportAllocs()
	var seq uint64
	now := time.Now().UnixNano()
	for i := 0; b.Loop(); i++ {
		if i%batch == 0 {
			for k := range segs {
				PutSeqTime(segs[k].Payload, seq, now)
				segs[k].RecvNs = now + 20_000
				seq++
			}
			now += 64 * 1000
			r.account(segs)
		}
	}
}

// newTestReceiver is a receiver with no socket, for its accounting alone.
func newTestReceiver(cfg ReceiverConfig) (*Receiver, error) {
	return &Receiver{cfg: cfg, done: make(chan struct{}), sig: NewSigner(cfg.Key), m: newMatcher(cfg.Token, cfg.StreamID),
		stats: stats.NewUDPReceiver(stats.UDPConfig{LateThreshold: cfg.LateThreshold})}, nil
}
