package iperf3

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

func clientSpec(mod func(*spec.Spec)) spec.Spec {
	s := spec.Default()
	s.Duration = time.Second
	if mod != nil {
		mod(&s)
	}
	return s
}

// directionBytes sums a result's sent and received bytes per direction.
func directionBytes(r *result.Result) map[string][2]int64 {
	out := map[string][2]int64{}
	for _, d := range r.Directions() {
		out[d.SenderRole] = [2]int64{d.Sent.Bytes, d.Received.Bytes}
	}
	return out
}

func TestClientAgainstIperf3TCP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*spec.Spec)
	}{
		{"single", nil},
		{"P4", func(s *spec.Spec) { s.Streams = 4 }},
		{"reverse", func(s *spec.Spec) { s.Reverse = true }},
		{"bidir", func(s *spec.Spec) { s.Bidir = true; s.Streams = 2 }},
		{"bytes", func(s *spec.Spec) { s.Duration = 0; s.Bytes = 64 << 20; s.Streams = 2 }},
		{"options", func(s *spec.Spec) {
			s.Window = 1 << 20
			s.MSS = 1200
			s.NoDelay = true
			s.Congestion = "reno"
			s.Length = 32 << 10
			s.Omit = time.Second
			s.Duration = 2 * time.Second
			s.Rate = 200e6
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, port := startIperf3Server(t)
			s := clientSpec(tt.mod)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
			if err != nil {
				t.Fatalf("RunClient: %v", err)
			}
			doc := srv.json(t)
			checkAgainstIperf3Server(t, res, doc)
			if l := res.Local.Limits; l != nil && (l.Interface != "lo" || l.Qdisc == "") {
				t.Errorf("client's limits %+v: want lo and its root qdisc", *l)
			}
		})
	}
}

// checkAgainstIperf3Server compares our client's result with what the
// iperf3 server printed. The server's document is its own view: its
// sum_sent/sum_received are the main direction (client→server unless
// reversed), with the other direction of --bidir in *_bidir_reverse.
// Its figures reach our result only through the results exchange, so
// agreement shows that the exchange maps every stream right.
func checkAgainstIperf3Server(t *testing.T, res *result.Result, doc map[string]any) {
	t.Helper()
	if res.Error != "" {
		t.Fatalf("result error: %s", res.Error)
	}
	if e, ok := doc["error"]; ok {
		t.Fatalf("iperf3 server error: %v", e)
	}
	dirs := directionBytes(res)
	primary := result.RoleClient
	if res.Spec.Reverse {
		primary = result.RoleServer
	}
	check := func(role, sentKey, recvKey string) {
		// iperf3 3.12's server prints only its own side (the peer's as 0).
		got := dirs[role]
		if role == result.RoleServer {
			// iperf3 3.16 and later send from a thread per stream, and
			// read their counts for the results they send us and for the
			// report they print at two moments: a write may finish in
			// between, either way (3.21: one or two 1 MiB blocks). 3.12
			// agrees exactly; newer ones within one block a stream.
			slack := int64(res.Spec.Streams * res.Spec.Length)
			if sent := jsondoc.IntAt(t, doc, "end", sentKey, "bytes"); got[0] != sent && (iperf3Older(t, 3, 16) || abs64(sent-got[0]) > slack) {
				t.Errorf("%s: the server sent %d by our result; iperf3 printed %d (%+d; iperf3 3.16+ may differ from itself by a %d-byte block a stream)", role, got[0], sent, got[0]-sent, res.Spec.Length)
			}
		} else if recv := jsondoc.IntAt(t, doc, "end", recvKey, "bytes"); got[1] != recv {
			t.Errorf("%s: the server received %d by our result; iperf3 printed %d", role, got[1], recv)
		}
		if !plausible(got[0], got[1], res.Spec.Omit > 0) {
			loadErrorf(t, "%s: sent %d, received %d: implausible", role, got[0], got[1])
		}
	}
	check(primary, "sum_sent", "sum_received")
	if res.Spec.Bidir {
		check(result.RoleServer, "sum_sent_bidir_reverse", "sum_received_bidir_reverse")
	}
	if n := len(res.Flows()); n != res.Spec.DataConns() {
		t.Errorf("%d flows; want %d", n, res.Spec.DataConns())
	}
	for _, f := range res.Flows() {
		if f.Sent == nil || f.Received == nil {
			t.Errorf("flow %d lacks a side: %+v", f.ID, f)
		}
	}
	if res.Spec.Bytes > 0 {
		if got := dirs[primary][0]; got != res.Spec.Bytes {
			t.Errorf("-n %d: sent %d", res.Spec.Bytes, got)
		}
	}
}

// UDP tests run alone (not in parallel with the TCP ones that fill the
// CPUs), so that loss on loopback means a bug, not a starved receiver.
func TestClientAgainstIperf3UDP(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*spec.Spec)
	}{
		{"forward", nil},
		{"reverse", func(s *spec.Spec) { s.Reverse = true }},
		{"bidir64", func(s *spec.Spec) { s.Bidir = true }},
		{"P2", func(s *spec.Spec) { s.Streams = 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, port := startIperf3Server(t)
			s := clientSpec(func(s *spec.Spec) {
				s.Protocol = spec.UDP
				s.Length = 1400
				s.Rate = 10e6
				if tt.mod != nil {
					tt.mod(s)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s, UDPCounters64: tt.name == "bidir64"})
			if err != nil {
				t.Fatalf("RunClient: %v", err)
			}
			doc := srv.json(t)
			if res.Error != "" {
				t.Fatal(res.Error)
			}
			for _, f := range res.Flows() {
				if f.Sent == nil || f.Received == nil || f.Sent.UDP == nil || f.Received.UDP == nil {
					t.Fatalf("flow %d incomplete", f.ID)
				}
				sent, recv := f.Sent.UDP, f.Received.UDP
				// 10 Mbit/s of 1400-byte datagrams for 1 s: about 893.
				if sent.Sent < 600 || sent.Sent > 1100 {
					loadErrorf(t, "flow %d: sent %d datagrams; want about 893", f.ID, sent.Sent)
				}
				if f.Sent.Bytes != sent.Sent*1400 || f.Received.Bytes != recv.Received*1400 || recv.Received+recv.Lost > sent.Sent {
					t.Errorf("flow %d: sent %d (%d bytes), received %d (%d bytes), lost %d: do not add up",
						f.ID, sent.Sent, f.Sent.Bytes, recv.Received, f.Received.Bytes, recv.Lost)
				}
				expectNoLoss(t, f.ID, sent.Sent, recv.Received, recv.Lost)
			}
			checkAgainstIperf3Server(t, res, doc)
			if s.ClientSends() {
				lost := jsondoc.IntAt(t, doc, "end", "sum_received", "lost_packets")
				var ours int64
				for _, f := range res.Flows() {
					if f.SenderRole == result.RoleClient {
						ours += f.Received.UDP.Lost
					}
				}
				if lost != ours {
					t.Errorf("iperf3 server lost %d datagrams; our result says %d", lost, ours)
				}
			}
		})
	}
}

// expectNoLoss wants no UDP loss on loopback at a low rate — unless the
// machine is overloaded (more runnable work than CPUs), when even iperf3
// against itself loses datagrams to starved receivers; then it only logs.
// An iperf3 receiver also stops counting the moment it reads TEST_END,
// so datagrams it had not read by then are neither received nor lost.
func expectNoLoss(t *testing.T, id int, sent, received, lost int64) {
	t.Helper()
	if lost == 0 && received == sent {
		return
	}
	loadErrorf(t, "flow %d: sent %d, received %d, lost %d on loopback; want every datagram", id, sent, received, lost)
}

// loadErrorf fails the test, unless the machine is overloaded (more
// runnable work than CPUs: other tests, fuzzers), when timing figures
// of starved processes mean nothing; then it logs.
func loadErrorf(t *testing.T, format string, args ...any) {
	t.Helper()
	if load := loadAverage(); load >= float64(runtime.NumCPU()) {
		t.Logf("not failing, the machine is overloaded (load %.1f on %d CPUs): "+format, append([]any{load, runtime.NumCPU()}, args...)...)
		return
	}
	t.Errorf(format, args...)
}

func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// plausible: the receiver got at most what was sent and most of it. With
// an omitted start the two ends cut it at slightly different moments.
func plausible(sent, received int64, omit bool) bool {
	slack := 1.0
	if omit {
		// Each end starts its omit period on its own clock; under -race
		// on a busy machine they have been seen 140 ms apart (+14% in a
		// 1 s test).
		slack = 1.2
	}
	return sent > 0 && float64(received) <= slack*float64(sent) && float64(received) >= 0.8*float64(sent)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
