package rrcontrol_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/rr/rrcontrol"
	"github.com/wireperf/wireperf/internal/server"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/tlstest"
)

var alice = &auth.Credential{User: "alice", Key: []byte("0123456789abcdef0123")}

func keyed(c *server.Config) { c.Keys = auth.Keys{alice.User: alice.Key} }

func runRRWith(srv *server.Server, s spec.Spec, mutate func(*control.ClientConfig)) (*result.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := rrcontrol.Config{ClientConfig: control.ClientConfig{Host: "127.0.0.1", Port: srv.Addr().Port, Spec: s, Logger: quiet()}}
	mutate(&cfg.ClientConfig)
	return rrcontrol.Run(ctx, cfg)
}

// A server that requires a key runs rr tests for a client that holds it,
// and refuses the others with "authentication failed".
func TestRRAgainstAKeyedServer(t *testing.T) {
	srv := startServerWith(t, keyed)
	for _, mode := range []string{spec.RRUDP, spec.RRTCP, spec.RRCRR} {
		res, err := runRRWith(srv, rrSpec(mode, 64), func(c *control.ClientConfig) { c.Auth = alice })
		if err != nil {
			t.Fatalf("%s with the key: %v", mode, err)
		}
		if p := res.Local.RR.Points[0]; p.Completed != 300 || res.Remote.RR == nil {
			t.Errorf("%s with the key: %d completed, server report %+v", mode, p.Completed, res.Remote.RR)
		}
	}
	_, err := runRRWith(srv, rrSpec(spec.RRUDP, 64), func(*control.ClientConfig) {})
	if !errors.Is(err, auth.ErrFailed) || !strings.Contains(err.Error(), "requires a key") {
		t.Fatalf("without the key: err = %v, want authentication failed", err)
	}
}

// rr runs over TLS on the control connection in every mode, the clock
// exchange included.
func TestRROverTLS(t *testing.T) {
	cert, parsed := tlstest.SelfSigned(t)
	pool := tlstest.Pool(parsed)
	srv := startServerWith(t, func(c *server.Config) {
		keyed(c)
		c.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	})
	for _, mode := range []string{spec.RRUDP, spec.RRTCP, spec.RRCRR} {
		res, err := runRRWith(srv, rrSpec(mode, 64), func(c *control.ClientConfig) {
			c.Auth = alice
			c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
		})
		if err != nil {
			t.Fatalf("%s over TLS: %v", mode, err)
		}
		lr := res.Local.RR
		if lr.Points[0].Completed != 300 || lr.Clock == nil || res.Remote.RR == nil {
			t.Errorf("%s over TLS: %d completed, clock %+v, server report %+v", mode, lr.Points[0].Completed, lr.Clock, res.Remote.RR)
		}
	}
}

// A frame the rr state does not admit ends the test, and the client hears
// the reason.
func TestRRUnexpectedFrameClosesWithTheReason(t *testing.T) {
	srv := startServer(t)
	tests := []struct {
		name  string
		start bool // send Start first
		typ   proto.Type
		body  any
		want  string
	}{
		{"interval while running", true, proto.TypeInterval, result.Interval{}, "unexpected interval while running rr"},
		{"sender-done while running", true, proto.TypeSenderDone, proto.SenderDone{}, "unexpected sender-done while running rr"},
		{"end report before start", false, proto.TypeEndReport, result.End{}, "unexpected end-report while setting up rr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := rrSpec(spec.RRCRR, 64)
			s.RRCount, s.Duration = 0, time.Minute
			ctl := connectRaw(t, srv.Addr().Port, s)
			if err := ctl.ReadReady(&proto.StreamsReady{}); err != nil {
				t.Fatal(err)
			}
			ev := ctl.Listen()
			if tt.start {
				if err := ctl.Send(proto.TypeStart, proto.Start{}); err != nil {
					t.Fatal(err)
				}
			}
			if err := ctl.Send(tt.typ, tt.body); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-ev.Lost:
				var pe *control.PeerError
				if !errors.As(err, &pe) || !strings.Contains(pe.Message, tt.want) {
					t.Fatalf("the server closed with %v, want its reason %q", err, tt.want)
				}
			case e := <-ev.End:
				t.Fatalf("the server went on to report (%+v) instead of refusing the frame", e.RR)
			case <-time.After(10 * time.Second):
				t.Fatal("the server neither refused the frame nor closed")
			}
		})
	}
	waitIdle(t, srv)
	if st := srv.Stats(); st.Running != 0 {
		t.Errorf("server still runs %d tests", st.Running)
	}
}
