package tcpflow

import (
	"bytes"
	"testing"
	"time"
)

// stampedStream is n blocks of blockLen bytes, block i stamped at
// base + i ms.
func stampedStream(n, blockLen int, base time.Time) []byte {
	var out []byte
	for i := range n {
		b := bytes.Repeat([]byte{0xa5}, blockLen)
		stampBlock(b, uint32(i), base.Add(time.Duration(i)*time.Millisecond))
		out = append(out, b...)
	}
	return out
}

func TestStampBlockHeader(t *testing.T) {
	at := time.Unix(1_800_000_000, 123456789)
	b := make([]byte, 20)
	stampBlock(b, 7, at)
	want := []byte{'w', 'p', 't', 't', 0, 0, 0, 7}
	if !bytes.Equal(b[:8], want) {
		t.Fatalf("header start %x, want %x", b[:8], want)
	}
	r := NewTripReader(20)
	r.Feed(b, at.Add(3*time.Millisecond))
	tot := r.Total()
	if tot.Count != 1 || tot.MinUs != 3000 || tot.MaxUs != 3000 {
		t.Fatalf("one block read 3 ms after its stamp: %+v", tot)
	}
	short := make([]byte, 5)
	stampBlock(short, 1, at) // a block shorter than the header takes its start
	if !bytes.Equal(short, want[:5]) {
		t.Fatalf("short block %x", short)
	}
}

// TestTripReaderEverySplit feeds a stream of blocks in two reads split at
// every offset, each read at a time of its own, and checks each block is
// timed at the read that brought its last byte.
func TestTripReaderEverySplit(t *testing.T) {
	const blockLen, blocks = 40, 4
	base := time.Unix(1_800_000_000, 0)
	stream := stampedStream(blocks, blockLen, base)
	first, second := base.Add(10*time.Millisecond), base.Add(20*time.Millisecond)
	for cut := 0; cut <= len(stream); cut++ {
		r := NewTripReader(blockLen)
		r.Feed(stream[:cut], first)
		r.Feed(stream[cut:], second)
		r.Finish()
		tot := r.Total()
		if tot.Count != blocks || tot.BadBlocks != 0 || tot.Negative != 0 {
			t.Fatalf("cut %d: %+v", cut, tot)
		}
		// Block i (stamped at i ms) ends at byte (i+1)*blockLen.
		var sum float64
		minUs, maxUs := 1e18, -1e18
		for i := range blocks {
			at := second
			if (i+1)*blockLen <= cut {
				at = first
			}
			us := float64(at.Sub(base.Add(time.Duration(i)*time.Millisecond))) / 1e3
			sum += us
			minUs, maxUs = min(minUs, us), max(maxUs, us)
		}
		if tot.MinUs != minUs || tot.MaxUs != maxUs || !near(tot.MeanUs, sum/blocks) {
			t.Fatalf("cut %d: min/mean/max %v/%v/%v, want %v/%v/%v", cut, tot.MinUs, tot.MeanUs, tot.MaxUs, minUs, sum/blocks, maxUs)
		}
		if tot.Histogram == nil || tot.Histogram.Count != blocks {
			t.Fatalf("cut %d: histogram %+v", cut, tot.Histogram)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// TestTripReaderByteByByte reads one byte at a time, as a slow reader
// may, and keeps every block.
func TestTripReaderByteByByte(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	stream := stampedStream(5, 16, base)
	r := NewTripReader(16)
	for i := range stream {
		r.Feed(stream[i:i+1], base.Add(time.Second))
	}
	if tot := r.Total(); tot.Count != 5 || tot.BadBlocks != 0 {
		t.Fatalf("%+v", tot)
	}
}

func TestTripReaderIntervalsAndStdev(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	stream := stampedStream(3, 32, base) // stamps 0, 1, 2 ms
	r := NewTripReader(32)
	r.Feed(stream[:64], base.Add(4*time.Millisecond)) // 4 and 3 ms
	iv := r.Interval()
	if iv.Count != 2 || iv.MinUs != 3000 || iv.MaxUs != 4000 || !near(iv.StdevUs, 707.1067811865476) {
		t.Fatalf("first interval %+v", iv)
	}
	r.Feed(stream[64:], base.Add(5*time.Millisecond)) // 3 ms
	if iv := r.Interval(); iv.Count != 1 || iv.MeanUs != 3000 || iv.StdevUs != 0 {
		t.Fatalf("second interval %+v", iv)
	}
	if tot := r.Total(); tot.Count != 3 || !near(tot.MeanUs, 10000.0/3) {
		t.Fatalf("total %+v", tot)
	}
	r.ResetTotal()
	if tot := r.Total(); tot.Count != 0 || tot.Histogram != nil {
		t.Fatalf("total after reset %+v", tot)
	}
}

// TestTripReaderUnsynchronised: a block read before its stamp says the
// receiver's clock is behind; it is counted, not hidden.
func TestTripReaderUnsynchronised(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	stream := stampedStream(2, 16, base)
	r := NewTripReader(16)
	r.Feed(stream, base.Add(-time.Millisecond+500*time.Microsecond)) // -0.5 and -1.5 ms
	tot := r.Total()
	if tot.Count != 2 || tot.Negative != 2 || !tot.Unsynchronised() || tot.MinUs != -1500 || tot.Histogram != nil {
		t.Fatalf("%+v", tot)
	}
}

// TestTripReaderLastShortBlock: -n's last block is shorter; it is timed
// by Finish if its header came whole, and not if it did not.
func TestTripReaderLastShortBlock(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	stream := stampedStream(2, 64, base)
	for _, tc := range []struct {
		cut  int
		want int64
	}{{64 + 20, 2}, {64 + 16, 2}, {64 + 15, 1}, {64, 1}} {
		r := NewTripReader(64)
		r.Feed(stream[:tc.cut], base.Add(time.Second))
		r.Finish()
		if tot := r.Total(); tot.Count != tc.want || tot.BadBlocks != 0 {
			t.Fatalf("stream cut at %d: %+v, want %d blocks", tc.cut, tot, tc.want)
		}
	}
}

// TestTripReaderUnstamped: bytes of a peer that does not stamp, or a
// block out of sequence, count as bad blocks and give no latency.
func TestTripReaderUnstamped(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	r := NewTripReader(32)
	r.Feed(make([]byte, 96), base)
	if tot := r.Total(); tot.Count != 0 || tot.BadBlocks != 3 {
		t.Fatalf("zeros: %+v", tot)
	}
	stream := stampedStream(3, 32, base)
	r = NewTripReader(32)
	r.Feed(stream[:32], base)
	r.Feed(stream[64:], base) // block 1 lost: block 2 is out of sequence
	if tot := r.Total(); tot.Count != 1 || tot.BadBlocks != 1 {
		t.Fatalf("gap: %+v", tot)
	}
}

func TestTripReaderFeedDoesNotAllocate(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	stream := stampedStream(8, 128, base)
	r := NewTripReader(128)
	allocs := testing.AllocsPerRun(50, func() {
		r.Feed(stream[:300], base)
		r.Feed(stream[300:], base)
	})
	if allocs != 0 {
		t.Fatalf("Feed allocates %v times per run", allocs)
	}
}

// FuzzTripReader feeds hostile bytes in hostile splits: the reader must
// neither crash nor count more blocks than the bytes hold.
func FuzzTripReader(f *testing.F) {
	base := time.Unix(1_800_000_000, 0)
	f.Add(stampedStream(3, 20, base), uint16(20), uint8(7))
	f.Add([]byte("wptt\xff\xff\xff\xff\x7f\xff\xff\xff\xff\xff\xff\xffwptt\x00\x00\x00\x00\x80\x00\x00\x00\x00\x00\x00\x00"), uint16(16), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, blockLen uint16, split uint8) {
		bl := max(int(blockLen), TripHeaderLen)
		r := NewTripReader(bl)
		step := max(int(split), 1)
		for i := 0; i < len(data); i += step {
			r.Feed(data[i:min(i+step, len(data))], base)
		}
		r.Finish()
		tot := r.Total()
		if blocks := int64(len(data)/bl + 1); tot.Count+tot.BadBlocks > blocks {
			t.Fatalf("%d bytes of %d-byte blocks gave %d timed and %d bad", len(data), bl, tot.Count, tot.BadBlocks)
		}
		if tot.Count > 0 && (tot.MinUs > tot.MeanUs+1e-3 || tot.MeanUs > tot.MaxUs+1e-3) {
			t.Fatalf("min %v mean %v max %v", tot.MinUs, tot.MeanUs, tot.MaxUs)
		}
	})
}
