package iperf3

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// receiverJitter is the jitter of the one stream a UDP test's receiver
// measured, as our result holds it.
func receiverJitter(t *testing.T, res *result.Result) result.UDP {
	t.Helper()
	fl := res.Flows()
	if len(fl) != 1 || fl[0].Received == nil || fl[0].Received.UDP == nil {
		t.Fatalf("want one UDP flow with a receiver, got %+v", fl)
	}
	return *fl[0].Received.UDP
}

// checkJitter wants the jitter an iperf3 receiver printed in our result,
// as a figure, not "n/a".
func checkJitter(t *testing.T, got result.UDP, doc map[string]any) {
	t.Helper()
	want := jsondoc.FloatAt(t, doc, "end", "streams", 0, "udp", "jitter_ms")
	if got.JitterSamples == 0 {
		t.Errorf("the receiver's jitter has no samples, so it reads n/a; iperf3 measured %.3f ms", want)
	}
	if math.Abs(got.JitterMs-want) > 1e-9*max(1, want) {
		t.Errorf("jitter %.6f ms; iperf3 measured %.6f ms", got.JitterMs, want)
	}
}

// TestJitterFromIperf3Receiver: when iperf3 is the receiver, the jitter it
// measured becomes the receiver's figure in our result, on our client and
// on our server.
func TestJitterFromIperf3Receiver(t *testing.T) {
	t.Run("client", func(t *testing.T) {
		srv, port := startIperf3Server(t)
		s := clientSpec(func(s *spec.Spec) { s.Protocol, s.Length, s.Rate = spec.UDP, 1400, 10e6 })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
		if err != nil {
			t.Fatalf("RunClient: %v", err)
		}
		checkJitter(t, receiverJitter(t, res), srv.json(t))
	})
	t.Run("server", func(t *testing.T) {
		srv := newTestServer(t, nil)
		doc := runIperf3Client(t, srv, "-u", "-R", "-b", "10M", "-l", "1400", "-t", "1")
		sr := srv.next(t)
		if sr.err != nil || sr.res == nil {
			t.Fatalf("Serve: %v", sr.err)
		}
		checkJitter(t, receiverJitter(t, sr.res), doc)
	})
}
