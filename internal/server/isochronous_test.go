package server

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// An isochronous test needs protocol version 2: a request for one after a
// version 1 greeting (which no client of ours sends) is refused, as a
// bad request, and the server goes on serving.
func TestIsochronousNeedsVersion2(t *testing.T) {
	ts := startServer(t, nil)
	c := dialControl(t, ts) // greets with version 1
	s := spec.Default()
	s.Protocol, s.Length, s.Rate = spec.UDP, 1448, 0
	s.Isochronous = &isoch.Frames{FPS: 60, Mean: 20e6}
	writeRequest(t, c, s)
	var e proto.Error
	readFrameOf(t, c, proto.TypeError, &e)
	if !strings.Contains(e.Message, "--isochronous needs protocol version 2") {
		t.Errorf("refusal %q: want it to name the version", e.Message)
	}
	c2 := dialControl(t, ts)
	writeRequest(t, c2, spec.Default())
	var acc proto.TestAccept
	readFrameOf(t, c2, proto.TypeTestAccept, &acc)
}

// With keys, an isochronous test's datagrams are signed over their frame
// fields too, and every frame arrives whole and counted, both ways.
func TestIsochronousSigned(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.Keys = testKeys() })
	s := quickSpec()
	s.Protocol, s.Length, s.Rate, s.Bidir = spec.UDP, 1000, 0, true
	s.Bytes, s.Duration = 0, time.Second
	s.Isochronous = &isoch.Frames{FPS: 20, Mean: 1.6e6} // 10,000 bytes: 10 datagrams a frame
	res, err := runWith(ts, s, func(c *session.ClientConfig) {
		c.Auth = &auth.Credential{User: "bob", Key: []byte("fedcba9876543210fedc")}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Flows() {
		if f.Sent == nil || f.Received == nil || f.Sent.UDP.Frames == nil || f.Received.UDP.Frames == nil {
			t.Fatalf("flow %d without frames on both ends", f.ID)
		}
		sent, got := f.Sent.UDP.Frames, f.Received.UDP.Frames
		if sent.Sent < 15 || got.Complete+got.Cut != sent.Sent || got.Incomplete != 0 || f.Received.UDP.Forged != 0 || f.Received.UDP.Invalid != 0 {
			t.Errorf("flow %d: %d frames sent; received %+v, %d forged, %d invalid", f.ID, sent.Sent, *got, f.Received.UDP.Forged, f.Received.UDP.Invalid)
		}
	}
}
