package server

import (
	"net"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

func udpSpec() spec.Spec {
	s := quickSpec()
	s.Protocol = spec.UDP
	s.Length = spec.DefaultUDPLength
	s.Rate = 100e6
	return s
}

// On loopback at a rate the machine sustains, every datagram arrives once
// and in order: the counts must match exactly.
func TestUDPLoopbackWithoutDrops(t *testing.T) {
	ts := startServer(t, nil)
	for _, mode := range []string{"forward", "reverse", "bidir", "no-gso"} {
		t.Run(mode, func(t *testing.T) {
			s := udpSpec()
			s.Reverse = mode == "reverse"
			s.Bidir = mode == "bidir"
			s.NoGSO = mode == "no-gso"
			res := mustRun(t, ts, s)
			for _, f := range res.Flows() {
				if f.Sent == nil || f.Received == nil || f.Sent.UDP == nil || f.Received.UDP == nil {
					t.Fatalf("flow %d lacks a side's UDP figures", f.ID)
				}
				sent, got := f.Sent.UDP, f.Received.UDP
				if sent.Sent == 0 {
					t.Fatalf("flow %d sent nothing", f.ID)
				}
				if got.Received != sent.Sent || got.Lost != 0 || got.Duplicates != 0 || got.Reordered != 0 || got.Late != 0 {
					t.Errorf("flow %d: sent %d; received %d lost %d dup %d reordered %d late %d",
						f.ID, sent.Sent, got.Received, got.Lost, got.Duplicates, got.Reordered, got.Late)
				}
				if got.Expected != sent.Sent {
					t.Errorf("flow %d: expected %d, sent %d", f.ID, got.Expected, sent.Sent)
				}
				if f.Received.Bytes != f.Sent.Bytes {
					t.Errorf("flow %d: %d bytes sent, %d received", f.ID, f.Sent.Bytes, f.Received.Bytes)
				}
				if got.JitterSamples == 0 {
					t.Errorf("flow %d: no jitter samples", f.ID)
				}
			}
		})
	}
}

// The interval figures of the receiver add up to its totals.
func TestUDPIntervalsAddUp(t *testing.T) {
	ts := startServer(t, nil)
	s := udpSpec()
	s.Duration = 1200 * time.Millisecond
	res := mustRun(t, ts, s)
	var received, sent int64
	for _, iv := range res.Remote.Intervals {
		for _, si := range iv.Streams {
			if si.UDP != nil {
				received += si.UDP.Received
			}
		}
	}
	for _, iv := range res.Local.Intervals {
		for _, si := range iv.Streams {
			if si.UDP != nil {
				sent += si.UDP.Sent
			}
		}
	}
	tot := res.Flows()[0]
	if sent != tot.Sent.UDP.Sent {
		t.Errorf("sender intervals add to %d, total %d", sent, tot.Sent.UDP.Sent)
	}
	if received != tot.Received.UDP.Received {
		t.Errorf("receiver intervals add to %d, total %d", received, tot.Received.UDP.Received)
	}
}

func TestUDPBytesLimit(t *testing.T) {
	ts := startServer(t, nil)
	s := udpSpec()
	s.Duration = 0
	s.Length = 1000
	s.Bytes = 2_000_000
	s.Streams = 2
	res := mustRun(t, ts, s)
	d := res.Directions()[0]
	if d.Sent.Bytes != s.Bytes || d.Received.Bytes != s.Bytes {
		t.Fatalf("sent %d, received %d bytes, want %d", d.Sent.Bytes, d.Received.Bytes, s.Bytes)
	}
}

// Datagrams that belong to no test are counted and change nothing.
func TestUDPForeignDatagrams(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: ts.Addr().IP, Port: ts.Addr().Port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 10 {
		_, _ = c.Write([]byte("not a wireperf datagram"))
	}
	waitFor(t, func() bool { return ts.Stats().UnmatchedUDP > 0 })
	res := mustRun(t, ts, udpSpec())
	if u := res.Flows()[0].Received.UDP; u.Lost != 0 || u.Received == 0 {
		t.Fatalf("a test after foreign datagrams: %+v", u)
	}
}
