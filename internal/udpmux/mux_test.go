package udpmux

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

func TestStreamsGetTheirOwnSockets(t *testing.T) {
	m, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	const streams = 4
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	got := make([][]byte, streams)
	errs := make([]error, streams)
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := []byte{'h', byte(i)}
			conn, first, _, err := m.Expect(ctx, func(p []byte, _ *net.UDPAddr) bool { return bytes.Equal(p, want) })
			if err != nil {
				errs[i] = err
				return
			}
			defer conn.Close()
			if !bytes.Equal(first, want) {
				errs[i] = err
			}
			// Answer on the stream's own socket, then read its data.
			_, _ = conn.Write([]byte{'a', byte(i)})
			buf := make([]byte, 64)
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := conn.Read(buf)
			errs[i] = err
			got[i] = append([]byte(nil), buf[:n]...)
		}()
	}
	// Wait until all four expectations are registered, so that no hello
	// arrives before its waiter.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) { // bounded poll: the registered waiters, until the deadline
		m.mu.Lock()
		n := len(m.waiters)
		m.mu.Unlock()
		if n == streams || time.Now().After(deadline) {
			break
		}
	}
	for i := range streams {
		c, err := net.DialUDP("udp", nil, m.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 16)
		for try := 0; ; try++ { // UDP: repeat the hello until answered
			_, _ = c.Write([]byte{'h', byte(i)})
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, err := c.Read(buf)
			if err == nil && n == 2 && buf[0] == 'a' && buf[1] == byte(i) {
				break
			}
			if try > 20 {
				t.Fatalf("stream %d: no answer", i)
			}
		}
		_, _ = c.Write([]byte{'d', byte(i)})
	}
	wg.Wait()
	for i := range streams {
		if errs[i] != nil {
			t.Fatalf("stream %d: %v", i, errs[i])
		}
		if !bytes.Equal(got[i], []byte{'d', byte(i)}) {
			t.Errorf("stream %d read %q, want its own data", i, got[i])
		}
	}
}

func TestUnmatchedAndCancel(t *testing.T) {
	m, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, _, err := m.Expect(ctx, func([]byte, *net.UDPAddr) bool { return false })
		errc <- err
	}()
	c, _ := net.DialUDP("udp", nil, m.Addr())
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); m.Unmatched() == 0 && time.Now().Before(deadline); {
		_, _ = c.Write([]byte("junk"))
		time.Sleep(5 * time.Millisecond) // bounded poll: resend junk until it is counted, until the deadline above
	}
	if m.Unmatched() == 0 {
		t.Fatal("junk datagram not counted")
	}
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Expect after cancel: %v", err)
	}
	m.Close()
	if _, _, _, err := m.Expect(context.Background(), nil); err != ErrClosed {
		t.Fatalf("Expect after Close: %v", err)
	}
}

// A hello that arrives just before its test asks for it is not lost:
// iperf3 sends its UDP connect message once.
func TestEarlyHelloIsKept(t *testing.T) {
	m, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c, err := net.DialUDP("udp", nil, m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("early")); err != nil {
		t.Fatal(err)
	}
	waitFor := time.Now().Add(5 * time.Second)
	for m.Unmatched() == 0 && time.Now().Before(waitFor) {
		time.Sleep(time.Millisecond) // bounded poll: until the mux has read it with no one waiting, at most 5 s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, first, _, err := m.Expect(ctx, func(p []byte, _ *net.UDPAddr) bool { return string(p) == "early" })
	if err != nil {
		t.Fatalf("the early hello was lost: %v", err)
	}
	defer conn.Close()
	if string(first) != "early" {
		t.Fatalf("first = %q", first)
	}
	// The stream's own socket now carries the peer's datagrams.
	_, _ = c.Write([]byte("data"))
	buf := make([]byte, 16)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "data" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}
