package server

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/isoch"
	"github.com/wireperf/wireperf/internal/proto"
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
