package tcpinfo

import (
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"testing"
	"time"
)

const transferSize = 1 << 20

// transfer connects over 127.0.0.1, sends transferSize bytes from client to
// server and returns once the client has seen the server's one-byte reply.
// That reply's segment acknowledges all the data, so bytes_acked is final
// without sleeping. cc, when set, is the client's congestion algorithm.
func transfer(t testing.TB, cc string) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, err = io.CopyN(io.Discard, c, transferSize)
		}
		if err == nil {
			_, err = c.Write([]byte{1})
		}
		done <- result{c, err}
	}()
	d := net.Dialer{}
	if cc != "" {
		d.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = setCongestion(fd, cc) }); err != nil {
				return err
			}
			return serr
		}
	}
	c, err := d.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write(make([]byte, transferSize)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.c != nil {
		t.Cleanup(func() { r.c.Close() })
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return c.(*net.TCPConn), r.c.(*net.TCPConn)
}

func TestGetLoopback(t *testing.T) {
	client, server := transfer(t, "")
	tests := []struct {
		name  string
		conn  *net.TCPConn
		check func(*Info) string // "" when fine, else what is wrong
	}{
		{"sender", client, func(i *Info) string {
			switch {
			case i.RTTus == 0 && i.MinRTTus == 0:
				return "no RTT"
			case i.BytesAcked < transferSize:
				return "BytesAcked below what the receiver read"
			case i.BytesSent < transferSize:
				return "BytesSent below what was written"
			}
			return ""
		}},
		{"receiver", server, func(i *Info) string {
			if i.BytesReceived < transferSize {
				return "BytesReceived below what was read"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		info, err := FromConn(tt.conn)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if info.State != 1 { // TCP_ESTABLISHED
			t.Errorf("%s: State = %d, want 1", tt.name, info.State)
		}
		if info.SndMSS == 0 {
			t.Errorf("%s: SndMSS = 0", tt.name)
		}
		if msg := tt.check(info); msg != "" {
			t.Errorf("%s: %s: %+v", tt.name, msg, info)
		}
	}
}

func TestGetNotTCP(t *testing.T) {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := FromConn(c.(*net.UDPConn)); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("FromConn on UDP: %v, want a getsockopt error", err)
	}
}

func TestGetClosed(t *testing.T) {
	client, _ := transfer(t, "")
	rc, err := client.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	client.Close()
	if _, err := Get(rc); err == nil {
		t.Error("Get on a closed conn succeeded")
	}
}

// BenchmarkGet is the cost of one sample; at 100 ms intervals even a
// microsecond is 0.001% of a core.
func BenchmarkGet(b *testing.B) {
	client, _ := transfer(b, "")
	rc, err := client.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Get(rc); err != nil {
			b.Fatal(err)
		}
	}
}

// ReceiveMemory charges at least the unread bytes' payload: the server
// leaves 64 KiB from the client unread.
func TestReceiveMemoryCoversUnread(t *testing.T) {
	client, server := transfer(t, "")
	const unread = 64 << 10
	if _, err := client.Write(make([]byte, unread)); err != nil {
		t.Fatal(err)
	}
	rc, err := server.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// The bytes arrive over loopback at once; poll until all are queued.
	var queued int
	for deadline := time.Now().Add(5 * time.Second); queued < unread && time.Now().Before(deadline); {
		if queued, err = Queued(rc); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	mem, err := ReceiveMemory(rc)
	if err != nil {
		t.Fatal(err)
	}
	if queued != unread || mem < int64(queued) {
		t.Fatalf("unread %d (want %d), receive memory %d: want at least the unread bytes", queued, unread, mem)
	}
}
