package tcpconnect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every attempt to a listener on loopback connects, each handshake
// timed; the listener accepted as many connections as were counted.
func TestRunConnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan int)
	go func() {
		n := 0
		for {
			c, err := ln.Accept()
			if err != nil {
				accepted <- n
				return
			}
			n++
			c.Close()
		}
	}()
	cfg := Config{Count: 5, Interval: 10 * time.Millisecond, Timeout: 2 * time.Second, Family: "tcp"}
	r, err := Run(context.Background(), ln.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if n := <-accepted; r.Attempts != 5 || r.Connected != 5 || n != 5 || r.Connect.Count != 5 {
		t.Fatalf("result %+v, listener accepted %d: want 5 attempts, 5 connected", r, n)
	}
	if !(r.Connect.Min > 0 && r.Connect.Min <= r.Connect.P50 && r.Connect.P50 <= r.Connect.Max) {
		t.Fatalf("handshake times out of order: %+v", r.Connect)
	}
}

// A port nothing listens on refuses every attempt.
func TestRunRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, err := Run(context.Background(), addr, Config{Count: 3, Interval: 10 * time.Millisecond, Timeout: time.Second, Family: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Attempts != 3 || r.Refused != 3 || r.Connected != 0 || r.Connect.Count != 0 {
		t.Fatalf("result %+v: want 3 refused", r)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Outcome
	}{
		{nil, Connected},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Refused},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), TimedOut},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, Failed},
		{errors.New("something else"), Failed},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		target string
		cfg    Config
		want   string
	}{
		{"127.0.0.1", DefaultConfig(), "HOST:PORT"},
		{"127.0.0.1:0", DefaultConfig(), "port"},
		{"127.0.0.1:99999", DefaultConfig(), "port"},
		{"127.0.0.1:80", Config{Count: 0, Interval: time.Second, Timeout: time.Second, Family: "tcp"}, "--count"},
		{"127.0.0.1:80", Config{Count: 1, Interval: time.Millisecond, Timeout: time.Second, Family: "tcp"}, "--interval"},
		{"127.0.0.1:80", Config{Count: 1, Interval: time.Second, Timeout: 0, Family: "tcp"}, "--timeout"},
	} {
		if _, err := Run(context.Background(), c.target, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q %+v: %v, want one line naming %s", c.target, c.cfg, err, c.want)
		}
	}
}
