package tcpflow

import (
	"bytes"
	"io"
	"runtime"
	"testing"
	"time"
)

// TestRepeatingPayloadOnTheWire sends a bounded stream with
// --repeating-payload and reads the bytes as they arrive on a plain
// loopback socket: each is the pattern's digit after the one before it,
// or its '0' where a block (or the rest of a block a write took only
// part of, which the sender sends again from the start, as iperf3 does)
// begins.
func TestRepeatingPayloadOnTheWire(t *testing.T) {
	a, b := tcpPair(t)
	const blockLen, total = 64 << 10, 8<<20 + 11
	tx := NewStream(1, true, a)
	tx.UseRepeatingPayload()
	tx.Start(time.Now(), make([]byte, blockLen), &countdown{left: total})
	_ = b.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(b)
	<-tx.Done()
	if err != nil || tx.Err() != nil || len(got) != total {
		t.Fatalf("read %d of %d bytes (%v, %v)", len(got), total, err, tx.Err())
	}
	restarts := 0
	for i, c := range got {
		switch {
		case c < '0' || c > '9':
			t.Fatalf("byte %d is %#x: not a digit of the pattern", i, c)
		case i > 0 && c == got[i-1]+1, i > 0 && c == '0' && got[i-1] == '9':
		case c == '0':
			restarts++
		default:
			t.Fatalf("byte %d is %q after %q: not the pattern", i, c, got[i-1])
		}
	}
	if blocks := (total + blockLen - 1) / blockLen; restarts > int(tx.Calls())+1 || restarts < 1 {
		t.Errorf("the pattern restarted %d times for %d writes (%d blocks)", restarts, tx.Calls(), blocks)
	}
	if !bytes.HasPrefix(got, []byte("01234567890123")) {
		t.Errorf("stream starts %q", got[:14])
	}
}

// TestNoRepeatingPayloadByDefault: without the flag a sender's block is
// its buffer as given.
func TestNoRepeatingPayloadByDefault(t *testing.T) {
	a, b := tcpPair(t)
	tx := NewStream(1, true, a)
	tx.Start(time.Now(), make([]byte, 4096), &countdown{left: 10000})
	_ = b.SetReadDeadline(time.Now().Add(30 * time.Second))
	got, err := io.ReadAll(b)
	<-tx.Done()
	if err != nil || len(got) != 10000 || bytes.ContainsAny(got, "123456789") {
		t.Fatalf("read %d bytes (%v): want 10000 zeros", len(got), err)
	}
}

// TestSkipRxCopyCountsExactly: a receiver that reads with MSG_TRUNC
// counts every byte the sender sent (the sender's count is the truth),
// sees the end of the stream, and its block is never written (the
// kernel copied nothing to it).
func TestSkipRxCopyCountsExactly(t *testing.T) {
	for _, length := range []int{128 << 10, 7919} {
		a, b := tcpPair(t)
		const total = 16<<20 + 5
		tx := NewStream(1, true, a)
		rx := NewStream(1, false, b)
		tx.UseRepeatingPayload()
		rx.UseSkipRxCopy()
		block := bytes.Repeat([]byte{0xAA}, length)
		epoch := time.Now()
		rx.Start(epoch, block, nil)
		tx.Start(epoch, make([]byte, 64<<10), &countdown{left: total})
		<-tx.Done()
		select {
		case <-rx.Done():
		case <-time.After(30 * time.Second):
			rx.Abort()
			t.Fatal("the receiver did not see the stream's end")
		}
		if tx.Err() != nil || rx.Err() != nil {
			t.Fatalf("errors: %v, %v", tx.Err(), rx.Err())
		}
		if tx.Bytes() != total || rx.Bytes() != tx.Bytes() {
			t.Errorf("block %d: sent %d, received %d; want %d both", length, tx.Bytes(), rx.Bytes(), total)
		}
		if runtime.GOOS == "linux" && !bytes.Equal(block, bytes.Repeat([]byte{0xAA}, length)) {
			t.Errorf("block %d: the receiver's block was written: the data was copied", length)
		}
	}
}
