package tcpflow

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestRawIOCarriesBytesIntactAndSeesEOF(t *testing.T) {
	a, b := tcpPair(t)
	w, err := newRawIO(a)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRawIO(b)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 5<<20+3)
	for i := range want {
		want[i] = byte(i * 7)
	}
	go func() {
		p := want
		for len(p) > 0 {
			n, err := w.Write(p)
			if err != nil {
				return
			}
			p = p[n:]
		}
		_ = a.CloseWrite()
	}()
	var got bytes.Buffer
	buf := make([]byte, 96<<10)
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("received %d bytes that differ from the %d sent", got.Len(), len(want))
	}
}

func TestRawIODeadlinesCutBlockedCalls(t *testing.T) {
	a, b := tcpPair(t)
	w, _ := newRawIO(a)
	r, _ := newRawIO(b)

	// Nothing to read: the read waits on the netpoller until its deadline.
	_ = b.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := r.Read(make([]byte, 16)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing sent: %v, want a deadline error", err)
	}

	// Nobody reads: the writes fill both buffers, then wait until the deadline.
	_ = a.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 1<<20)
	var err error
	for sent := 0; err == nil && sent < 1<<30; {
		var n int
		n, err = w.Write(buf)
		sent += n
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write into full buffers: %v, want a deadline error", err)
	}
}

func TestRawIOReportsSocketErrors(t *testing.T) {
	a, b := tcpPair(t)
	w, _ := newRawIO(a)
	_ = b.SetLinger(0)
	b.Close() // RST
	buf := make([]byte, 64<<10)
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		_, err = w.Write(buf)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || (errno != syscall.EPIPE && errno != syscall.ECONNRESET) {
		t.Fatalf("write to a reset connection: %v, want EPIPE or ECONNRESET", err)
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "write" {
		t.Fatalf("error %v is not a write OpError", err)
	}
}

// BenchmarkLoopbackSend compares a plain net.Conn write with rawIO's, one
// 128 KiB block per operation, a reader draining the other end.
func BenchmarkLoopbackSend(b *testing.B) {
	for _, mode := range []string{"conn", "raw"} {
		b.Run(mode, func(b *testing.B) {
			tx, rx := tcpPair(b)
			go func() { _, _ = io.Copy(io.Discard, rx) }()
			var w io.Writer = tx
			if mode == "raw" {
				w, _ = newRawIO(tx)
			}
			buf := make([]byte, 128<<10)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				for p := buf; len(p) > 0; {
					n, err := w.Write(p)
					if err != nil {
						b.Fatal(err)
					}
					p = p[n:]
				}
			}
		})
	}
}
