package server

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// fakeDNS answers every A query with 127.0.0.1 and every AAAA query with
// ::1, on a loopback UDP port, until the test ends.
func fakeDNS(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
			switch q.Type {
			case dnsmessage.TypeA:
				b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
			case dnsmessage.TypeAAAA:
				b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: [16]byte{15: 1}})
			}
			out, err := b.Finish()
			if err == nil {
				pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// A name with two addresses (::1 and 127.0.0.1) of which only one runs
// the server: the control connection reaches it after trying the other,
// and the UDP streams go where it went, not to the name's first address
// (where their hellos would be lost and the test would fail).
func TestDataGoesWhereTheControlConnectionWent(t *testing.T) {
	dns := fakeDNS(t)
	saved := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", dns)
	}}
	t.Cleanup(func() { net.DefaultResolver = saved })
	if addrs, err := net.DefaultResolver.LookupHost(context.Background(), "wp-two-addresses.test"); err != nil || len(addrs) != 2 {
		t.Skipf("the resolver does not use the test's DNS here: %v %v", addrs, err)
	}
	ts := startServer(t, nil) // on 127.0.0.1 only
	s := quickSpec()
	s.Protocol, s.Length, s.Rate = spec.UDP, 1400, 10e6
	res, err := runWith(ts, s, func(c *session.ClientConfig) {
		c.Host, c.ConnectTimeout = "wp-two-addresses.test", 3*time.Second
	})
	if err != nil {
		t.Fatalf("a UDP test to a name with two addresses: %v", err)
	}
	if d := res.Directions()[0]; d.Received.Bytes == 0 {
		t.Fatal("nothing received")
	}
}
