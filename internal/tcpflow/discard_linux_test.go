package tcpflow

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// TestRawIOTruncDiscards: the poller-side reader (rawIO, used when the
// stream can't take its socket over) with MSG_TRUNC counts every byte
// written, sees EOF and leaves its buffer untouched.
func TestRawIOTruncDiscards(t *testing.T) {
	a, b := tcpPair(t)
	r, err := newRawIO(b)
	if err != nil {
		t.Fatal(err)
	}
	r.trunc = true
	const total = 3<<20 + 9
	go func() {
		_, _ = a.Write(make([]byte, total))
		_ = a.CloseWrite()
	}()
	_ = b.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := bytes.Repeat([]byte{0x55}, 50000)
	var got int
	for {
		n, err := r.Read(buf)
		got += n
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", got, err)
		}
	}
	if got != total {
		t.Errorf("counted %d bytes, want %d", got, total)
	}
	if !bytes.Equal(buf, bytes.Repeat([]byte{0x55}, len(buf))) {
		t.Error("the buffer was written: the data was copied")
	}
}
