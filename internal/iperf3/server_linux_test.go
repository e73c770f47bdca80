package iperf3

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// runIperf3Client runs an iperf3 client against s with -J and returns its
// document.
func runIperf3Client(t *testing.T, s *testServer, args ...string) map[string]any {
	t.Helper()
	p := startIperf3(t, 30*time.Second, append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(s.port), "-J"}, args...)...)
	return p.json(t)
}

// checkIperf3Client compares the server's record with the iperf3
// client's document: the client's own side must match exactly what our
// record holds as Remote, and ours what the client printed from our
// results.
func checkIperf3Client(t *testing.T, sr serveResult, doc map[string]any) {
	t.Helper()
	if sr.err != nil || sr.res == nil {
		t.Fatalf("Serve: %v", sr.err)
	}
	res := sr.res
	if res.Error != "" {
		t.Fatalf("result error: %s", res.Error)
	}
	if e, ok := doc["error"]; ok {
		t.Fatalf("iperf3 client error: %v", e)
	}
	dirs := directionBytes(res)
	primary := result.RoleClient
	if res.Spec.Reverse {
		primary = result.RoleServer
	}
	check := func(role, sentKey, recvKey string) {
		got := dirs[role]
		sent := jsondoc.IntAt(t, doc, "end", sentKey, "bytes")
		recv := jsondoc.IntAt(t, doc, "end", recvKey, "bytes")
		if got[0] != sent || got[1] != recv {
			t.Errorf("%s→: our record: sent %d, received %d; iperf3 client printed sent %d, received %d", role, got[0], got[1], sent, recv)
		}
		// A receiving iperf3 client with -k ends after that many reads,
		// each of them a block to it however short (blocks_received), so
		// it may end before all the blocks we sent have arrived: only
		// more than was sent is impossible then.
		readsEnd := res.Spec.Reverse && res.Spec.Blocks > 0 && role == primary
		if readsEnd && (got[1] <= 0 || got[1] > got[0]) || !readsEnd && !plausible(got[0], got[1], res.Spec.Omit > 0) {
			loadErrorf(t, "%s→: sent %d, received %d: implausible", role, got[0], got[1])
		}
	}
	check(primary, "sum_sent", "sum_received")
	if res.Spec.Bidir {
		check(result.RoleServer, "sum_sent_bidir_reverse", "sum_received_bidir_reverse")
	}
	// An iperf3 client keeps its streams open until the results are
	// shown: the drain must end when the data has arrived, not run on to
	// a timeout cutting empty rows after the test.
	for _, iv := range res.Local.Intervals {
		var received int64
		var receivers bool
		for _, st := range iv.Streams {
			if !st.Sender {
				receivers = true
				received += st.Bytes
			}
		}
		if receivers && received == 0 && iv.Index > 0 {
			t.Errorf("an empty row %.2f-%.2f s after the data stopped: the drain ran past the test", iv.Start, iv.End)
		}
	}
	if n := len(res.Flows()); n != res.Spec.DataConns() {
		t.Errorf("%d flows; want %d", n, res.Spec.DataConns())
	}
	for _, f := range res.Flows() {
		if f.Sent == nil || f.Received == nil {
			t.Errorf("flow %d lacks a side", f.ID)
		}
	}
}

func TestServeIperf3ClientTCP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"single", []string{"-t", "1"}},
		{"P4", []string{"-t", "1", "-P", "4"}},
		{"reverse", []string{"-t", "1", "-R"}},
		{"bidir", []string{"-t", "1", "--bidir", "-P", "2"}},
		{"bytes", []string{"-n", "64M"}},
		{"reverse-bytes", []string{"-R", "-n", "64M", "-P", "2"}},
		{"options", []string{"-t", "1", "-w", "1M", "-M", "1200", "-N", "-C", "reno", "-l", "32K", "-O", "1", "-b", "200M"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, nil)
			doc := runIperf3Client(t, s, tt.args...)
			checkIperf3Client(t, s.next(t), doc)
		})
	}
}

// UDP runs alone, like the client's UDP tests.
func TestServeIperf3ClientUDP(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"forward", nil},
		{"reverse", []string{"-R"}},
		{"bidir64", []string{"--bidir", "--udp-counters-64bit"}},
		{"P2", []string{"-P", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, nil)
			doc := runIperf3Client(t, s, append([]string{"-u", "-b", "10M", "-l", "1400", "-t", "1"}, tt.args...)...)
			sr := s.next(t)
			checkIperf3Client(t, sr, doc)
			for _, f := range sr.res.Flows() {
				sent, recv := f.Sent.UDP, f.Received.UDP
				if sent == nil || recv == nil {
					t.Fatalf("flow %d: no UDP figures", f.ID)
				}
				if f.Sent.Bytes != sent.Sent*1400 || f.Received.Bytes != recv.Received*1400 || recv.Received+recv.Lost > sent.Sent {
					t.Errorf("flow %d: sent %d (%d bytes), received %d (%d bytes), lost %d: do not add up",
						f.ID, sent.Sent, f.Sent.Bytes, recv.Received, f.Received.Bytes, recv.Lost)
				}
				if f.SenderRole == result.RoleServer {
					// The receiver is the iperf3 client, which stops counting at
					// TEST_END: what is still in flight then, or sent before our
					// sender hears of the end, is in neither its received nor its
					// lost count (iperf3's blind tail). Allow 10 ms of datagrams
					// (9 at 10 Mbit/s) and two more: a scheduling delay under
					// -race, not a counting error, which would be far larger.
					perSecond := 10e6 / 8 / 1400 // datagrams at -b 10M -l 1400
					tail := int64(perSecond/100) + 2
					if recv.Lost != 0 || sent.Sent-recv.Received > tail || recv.Received > sent.Sent {
						loadErrorf(t, "flow %d: sent %d, iperf3 received %d, lost %d; want all but an in-flight tail of at most %d", f.ID, sent.Sent, recv.Received, recv.Lost, tail)
					}
					continue
				}
				expectNoLoss(t, f.ID, sent.Sent, recv.Received, recv.Lost)
			}
			// The iperf3 client's loss figure is ours when we receive.
			if !sr.res.Spec.Reverse && !sr.res.Spec.Bidir {
				var ours int64
				for _, f := range sr.res.Flows() {
					ours += f.Received.UDP.Lost
				}
				if lost := jsondoc.IntAt(t, doc, "end", "sum_received", "lost_packets"); lost != ours {
					t.Errorf("iperf3 client printed %d lost; our record has %d", lost, ours)
				}
			}
		})
	}
}

func TestServeGetServerOutput(t *testing.T) {
	t.Parallel()
	for _, text := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "text"}[text], func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t, func(c *ServeConfig) { c.ServerOutput = emit.ServerOutput(text) })
			doc := runIperf3Client(t, s, "-t", "1", "--get-server-output")
			checkIperf3Client(t, s.next(t), doc)
			if text {
				out, _ := doc["server_output_text"].(string)
				if !strings.Contains(out, "receiver") || !strings.Contains(out, "sender") {
					t.Errorf("server_output_text = %q", out)
				}
				return
			}
			// The server's own JSON: its sum_received is what it read.
			got := jsondoc.IntAt(t, doc, "server_output_json", "end", "sum_received", "bytes")
			if want := jsondoc.IntAt(t, doc, "end", "sum_received", "bytes"); got != want {
				t.Errorf("server_output_json says %d bytes received; the client printed %d", got, want)
			}
		})
	}
}

func TestServeThreeClientsAtOnce(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, nil)
	args := [][]string{{"-t", "2"}, {"-t", "2", "-R", "-P", "2"}, {"-t", "2", "-u", "-b", "5M"}}
	procs := make([]*iperfProc, len(args))
	for i, a := range args {
		procs[i] = startIperf3(t, 30*time.Second, append([]string{"-c", "127.0.0.1", "-p", strconv.Itoa(s.port), "-J"}, a...)...)
	}
	results := map[string]serveResult{}
	for range args {
		sr := s.next(t)
		if sr.res == nil {
			t.Fatalf("a test failed: %v", sr.err)
		}
		results[sr.res.Token] = sr
	}
	for i, p := range procs {
		doc := p.json(t)
		cookie, _ := jsondoc.At(t, doc, "start", "cookie").(string)
		sr, ok := results[cookie]
		if !ok {
			t.Fatalf("client %d (cookie %q): no record on the server", i, cookie)
		}
		checkIperf3Client(t, sr, doc)
	}
}
