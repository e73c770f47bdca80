package control

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/spec"
)

// testKey is a key that passes the strength check.
var testKey = &auth.Credential{User: "alice", Key: []byte("4c1f0b3e8a9d27f65e0c1a7b93d4f2e8")}

// fakeServer is one connection's worth of a wireperf server that lies
// about keys, in one of three ways (its how): "no-proof" asks for no key
// and accepts the test; "wrong-proof" challenges, then answers with a
// proof made under another key; "refuse" asks for no key and refuses the
// test, as a busy server does. It reports the frames it read after its
// greeting, and whether the client hung up within 5 s.
type fakeServer struct {
	addr string
	done chan fakeServerSeen
}

type fakeServerSeen struct {
	frames []proto.Type
	hungUp bool
}

func startFakeServer(t *testing.T, how string) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{addr: ln.Addr().String(), done: make(chan fakeServerSeen, 1)}
	go func() {
		defer ln.Close()
		var seen fakeServerSeen
		defer func() { f.done <- seen }()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := proto.ReadGreeting(c, proto.MagicControl); err != nil {
			return
		}
		var flags uint16
		if how == "wrong-proof" {
			flags = proto.FlagAuth
		}
		if proto.WriteGreetingFlags(c, proto.MagicServer, flags) != nil {
			return
		}
		var nonce []byte
		if how == "wrong-proof" {
			nonce = make([]byte, auth.NonceLen)
			if proto.WriteFrame(c, proto.TypeChallenge, proto.Challenge{Nonce: nonce}) != nil {
				return
			}
		}
		for {
			fr, err := proto.ReadFrame(c)
			if err != nil {
				seen.hungUp = errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
				return
			}
			seen.frames = append(seen.frames, fr.Type)
			switch fr.Type {
			case proto.TypeAuth:
				var a proto.Auth
				_ = fr.Decode(&a)
				other := []byte("9b2e7d4a1c6f08e35d7a2b9c4e1f6a03")
				_ = proto.WriteFrame(c, proto.TypeAuthOK, proto.AuthOK{MAC: auth.ServerProof(other, nonce, a.Nonce, a.User)})
			case proto.TypeTestRequest:
				if how == "refuse" {
					_ = proto.WriteFrame(c, proto.TypeError, proto.Error{Message: "server is busy: try again later"})
					continue
				}
				_ = proto.WriteFrame(c, proto.TypeTestAccept, proto.TestAccept{Token: strings.Repeat("ab", 16)})
			}
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return f
}

func (f *fakeServer) config(t *testing.T) ClientConfig {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	return ClientConfig{Host: a.IP.String(), Port: a.Port, ConnectTimeout: 3 * time.Second, Spec: spec.Default()}
}

// A client with a key refuses a server that asks for none (it accepted
// the test, but proved nothing), and one whose proof is not under the
// same key: an authentication failure, one line, and the connection
// closed with no test started.
func TestClientRefusesAServerWithoutTheKey(t *testing.T) {
	for _, how := range []string{"no-proof", "wrong-proof"} {
		f := startFakeServer(t, how)
		cfg := f.config(t)
		cfg.Auth = testKey
		ctl, err := Connect(context.Background(), cfg)
		if ctl != nil {
			ctl.Close()
		}
		seen := <-f.done
		if ctl != nil || !errors.Is(err, auth.ErrFailed) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Connect = %v, %v; want one line of authentication failed", how, ctl != nil, err)
			continue
		}
		if !seen.hungUp {
			t.Errorf("%s: the connection stayed open", how)
		}
		for _, typ := range seen.frames {
			if typ == proto.TypeStart {
				t.Errorf("%s: the client started the test", how)
			}
		}
		t.Logf("%s: %v", how, err)
	}
}

// A server that refuses before any key is asked for (busy, or outside its
// --allow) is still heard: its reason, not an authentication failure.
func TestClientWithAKeyHearsARefusal(t *testing.T) {
	f := startFakeServer(t, "refuse")
	cfg := f.config(t)
	cfg.Auth = testKey
	_, err := Connect(context.Background(), cfg)
	<-f.done
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "server is busy") {
		t.Fatalf("Connect = %v; want the server's refusal", err)
	}
}

// Without a key, a server that asks for none is tested, as before.
func TestClientWithoutAKeyTestsAServerWithoutOne(t *testing.T) {
	f := startFakeServer(t, "no-proof")
	ctl, err := Connect(context.Background(), f.config(t))
	if err != nil {
		t.Fatalf("Connect without a key: %v", err)
	}
	if got := ctl.Accept().Token; got != strings.Repeat("ab", 16) {
		t.Errorf("accepted with token %q", got)
	}
	ctl.Close()
	<-f.done
}

// A client with a key does not go on in iperf3's protocol with an iperf3
// server, idle or busy, even when its caller would take the test on
// (KeepIperf3): iperf3 cannot prove a key. The connection is closed.
func TestClientWithAKeyRefusesIperf3(t *testing.T) {
	for _, busy := range []bool{false, true} {
		f := startFakeIperf3(t, busy)
		cfg := f.config(t)
		cfg.Auth, cfg.KeepIperf3 = testKey, true
		ctl, err := Connect(context.Background(), cfg)
		var ip3 *Iperf3ServerError
		if ctl != nil || errors.As(err, &ip3) || !errors.Is(err, auth.ErrFailed) || !strings.Contains(err.Error(), "iperf3") {
			t.Errorf("busy=%v: Connect = %v, %v; want an authentication failure naming iperf3", busy, ctl != nil, err)
		}
		if seen := <-f.done; !seen.hungUp {
			t.Errorf("busy=%v: the connection to the iperf3 server stayed open", busy)
		}
	}
}
