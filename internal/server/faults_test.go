package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

func dialControl(t *testing.T, ts *testServer) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := proto.WriteGreeting(c, proto.MagicControl); err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := proto.ReadGreeting(c, proto.MagicServer); err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn)
}

func writeRequest(t *testing.T, c net.Conn, s spec.Spec) {
	t.Helper()
	if err := proto.WriteFrame(c, proto.TypeTestRequest, proto.TestRequest{Spec: s}); err != nil {
		t.Fatal(err)
	}
}

// Each fault must leave the server serving the next client.
func TestServerSurvivesFaults(t *testing.T) {
	faults := []struct {
		name  string
		do    func(t *testing.T, ts *testServer)
		check func(t *testing.T, st Stats)
	}{
		{"random bytes on the control port", func(t *testing.T, ts *testServer) {
			c, _ := net.Dial("tcp", ts.Addr().String())
			junk := make([]byte, 4096)
			_, _ = rand.Read(junk)
			_, _ = c.Write(junk)
			c.Close()
		}, nil},
		{"random bytes after a valid greeting", func(t *testing.T, ts *testServer) {
			c := dialControl(t, ts)
			junk := make([]byte, 4096)
			_, _ = rand.Read(junk)
			_, _ = c.Write(junk)
			c.Close()
		}, nil},
		{"huge length prefix", func(t *testing.T, ts *testServer) {
			c := dialControl(t, ts)
			_, _ = c.Write(binary.BigEndian.AppendUint32(nil, 0xffffffff))
			// The server must answer and hang up, not wait for 4 GiB.
			buf := make([]byte, 512)
			for {
				if _, err := c.Read(buf); err != nil {
					break
				}
			}
		}, func(t *testing.T, st Stats) {
			if st.BadControl == 0 {
				t.Error("huge frame not counted as bad control")
			}
		}},
		{"a connection that sends nothing", func(t *testing.T, ts *testServer) {
			c, _ := net.Dial("tcp", ts.Addr().String())
			buf := make([]byte, 1)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Read(buf); err == nil {
				t.Error("server sent something to a silent connection")
			}
			c.Close() // the server hung up after its handshake timeout
		}, func(t *testing.T, st Stats) {
			if st.UnknownProto == 0 {
				t.Error("silent connection not counted")
			}
		}},
		{"a data connection with an unknown token", func(t *testing.T, ts *testServer) {
			c, _ := net.Dial("tcp", ts.Addr().String())
			h := proto.DataHello{StreamID: 1}
			_, _ = rand.Read(h.Token[:])
			_, _ = c.Write(h.Marshal())
			_, _ = c.Write(make([]byte, 1<<16))
			buf := make([]byte, 1)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, _ = c.Read(buf) // returns once the server closes it
			c.Close()
		}, func(t *testing.T, st Stats) {
			if st.ForeignData == 0 {
				t.Error("foreign data connection not counted")
			}
		}},
		{"a client killed in the middle of a test", func(t *testing.T, ts *testServer) {
			killedClient(t, ts)
		}, func(t *testing.T, st Stats) {
			if st.TestsAborted == 0 {
				t.Error("killed client's test not counted as aborted")
			}
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			ts := startServer(t, func(c *Config) { c.HandshakeTimeout = 500 * time.Millisecond })
			f.do(t, ts)
			waitFor(t, func() bool { return ts.Stats().Running == 0 })
			s := quickSpec()
			s.Duration = 300 * time.Millisecond
			res := mustRun(t, ts, s)
			if d := res.Directions()[0]; d.Received.Bytes == 0 {
				t.Fatal("the next test moved no data")
			}
			if f.check != nil {
				// Counters move when the server's side of a connection ends,
				// which can trail what the client saw.
				waitFor(t, func() bool {
					st := ts.Stats()
					return st.TestsAborted+st.BadControl+st.UnknownProto+st.ForeignData > 0
				})
				f.check(t, ts.Stats())
			}
		})
	}
}

// killedClient starts a real test by hand and then drops every connection
// without a word, as a killed process would.
func killedClient(t *testing.T, ts *testServer) {
	c := dialControl(t, ts)
	s := quickSpec()
	s.Duration = 30 * time.Second
	s.Reverse = true
	writeRequest(t, c, s)
	fr, err := proto.ReadFrame(c)
	if err != nil || fr.Type != proto.TypeTestAccept {
		t.Fatalf("not accepted: %v %v", fr.Type, err)
	}
	var acc proto.TestAccept
	if err := fr.Decode(&acc); err != nil {
		t.Fatal(err)
	}
	tok, _ := proto.ParseToken(acc.Token)
	d, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = d.Write(proto.DataHello{Token: tok, StreamID: 1}.Marshal())
	if fr, err := proto.ReadFrame(c); err != nil || fr.Type != proto.TypeStreamsReady {
		t.Fatalf("streams not ready: %v %v", fr.Type, err)
	}
	if err := proto.WriteFrame(c, proto.TypeStart, proto.Start{}); err != nil {
		t.Fatal(err)
	}
	// Read some data so that the test is really running, then vanish.
	buf := make([]byte, 1<<16)
	_ = d.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := d.Read(buf); err != nil {
		t.Fatalf("no data from the server: %v", err)
	}
	c.SetLinger(0)
	c.Close()
	d.Close()
}

func TestClientErrorsAreClear(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	_, err = session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: "127.0.0.1", Port: port, ConnectTimeout: 2 * time.Second, Spec: quickSpec(),
	}})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want connection refused", err)
	}
}
