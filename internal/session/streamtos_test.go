package session_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// TestStreamTOSRefusesAnOlderServer: a server before the TOS per stream
// ignores the request's list and accepts without saying it sets them;
// the client then refuses before any data connection, tells the server
// why, and names the reason.
func TestStreamTOSRefusesAnOlderServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type heard struct {
		request proto.TestRequest
		next    proto.Frame
		err     error
	}
	got := make(chan heard, 1)
	go func() {
		var h heard
		defer func() { got <- h }()
		c, err := ln.Accept()
		if err != nil {
			h.err = err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, h.err = proto.ReadGreeting(c, proto.MagicControl); h.err != nil {
			return
		}
		if h.err = proto.WriteGreeting(c, proto.MagicServer); h.err != nil {
			return
		}
		fr, err := proto.ReadFrame(c)
		if h.err = err; err != nil {
			return
		}
		if h.err = fr.Decode(&h.request); h.err != nil {
			return
		}
		// An older server's acceptance: no stream_tos.
		if h.err = proto.WriteFrame(c, proto.TypeTestAccept, proto.TestAccept{Token: strings.Repeat("ab", proto.TokenLen)}); h.err != nil {
			return
		}
		h.next, h.err = proto.ReadFrame(c)
	}()
	s := spec.Default()
	s.Streams, s.Bidir, s.StreamTOS = 4, true, []int{0x00, 0x20, 0xa0, 0xb8}
	res, err := runClient(t, ln.Addr().(*net.TCPAddr).Port, s, nil)
	if !errors.Is(err, session.ErrNoStreamTOS) || res != nil {
		t.Fatalf("RunClient = %v, %v; want no result and ErrNoStreamTOS", res, err)
	}
	if !strings.Contains(err.Error(), "does not set a TOS per stream") {
		t.Errorf("error %q does not say why", err)
	}
	h := <-got
	if h.err != nil {
		t.Fatalf("the older server: %v", h.err)
	}
	if tos := h.request.Spec.StreamTOS; len(tos) != 4 || tos[3] != 0xb8 {
		t.Errorf("the request carried stream_tos %v, want the four classes", tos)
	}
	var e proto.Error
	if h.next.Type != proto.TypeError || h.next.Decode(&e) != nil || !strings.Contains(e.Message, "TOS per stream") {
		t.Errorf("after the acceptance the server heard %v %q, want an error naming the TOS per stream", h.next.Type, h.next.Body)
	}
}
