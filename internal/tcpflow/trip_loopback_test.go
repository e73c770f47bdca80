package tcpflow

import (
	"testing"
	"time"
)

// TestTripTimesLoopback stamps a bounded stream over loopback, read into
// a buffer of another size so that reads straddle the blocks: every
// block, the short last one too, is timed, and none before it was sent
// (one clock at both ends).
func TestTripTimesLoopback(t *testing.T) {
	a, b := tcpPair(t)
	const blockLen, blocks = 10000, 400
	const total = blocks*blockLen + 123 // a short last block, header whole
	tx := NewStream(1, true, a)
	rx := NewStream(1, false, b)
	tx.UseTripTimes(blockLen)
	rx.UseTripTimes(blockLen)
	epoch := time.Now()
	rx.Start(epoch, make([]byte, 7919), nil)
	tx.Start(epoch, make([]byte, blockLen), &countdown{left: total})
	<-tx.Done()
	<-rx.Done()
	if tx.Err() != nil || rx.Err() != nil || rx.Bytes() != total {
		t.Fatalf("received %d of %d (errors %v, %v)", rx.Bytes(), total, tx.Err(), rx.Err())
	}
	tot := rx.Trip().Total()
	if tot.Count != blocks+1 || tot.BadBlocks != 0 {
		t.Fatalf("timed %d blocks (%d bad), want %d", tot.Count, tot.BadBlocks, blocks+1)
	}
	if tot.Negative != 0 || tot.MinUs < 0 || tot.MinUs > tot.MeanUs || tot.MeanUs > tot.MaxUs {
		t.Fatalf("latencies out of order or negative: %+v", tot)
	}
	if tot.Histogram == nil || tot.Histogram.Count != blocks+1 {
		t.Fatalf("histogram %+v", tot.Histogram)
	}
	if tx.Trip() != nil {
		t.Fatal("a sender has no trip reader")
	}
}

// BenchmarkStreamLoopback moves 64 MiB over loopback in 128 KiB blocks,
// without and with --trip-times: the stamps cost a clock read and 16
// bytes per block on the sender, a clock read per read on the receiver.
func BenchmarkStreamLoopback(b *testing.B) {
	for _, trip := range []bool{false, true} {
		name := "plain"
		if trip {
			name = "trip-times"
		}
		b.Run(name, func(b *testing.B) {
			const blockLen, total = 128 << 10, 64 << 20
			b.SetBytes(total)
			for range b.N {
				c, s := tcpPair(b)
				tx, rx := NewStream(1, true, c), NewStream(1, false, s)
				if trip {
					tx.UseTripTimes(blockLen)
					rx.UseTripTimes(blockLen)
				}
				epoch := time.Now()
				rx.Start(epoch, make([]byte, blockLen), nil)
				tx.Start(epoch, make([]byte, blockLen), &countdown{left: total})
				<-tx.Done()
				<-rx.Done()
				if rx.Bytes() != total {
					b.Fatalf("received %d", rx.Bytes())
				}
				_, _ = tx.Close(), rx.Close()
			}
		})
	}
}
