package iperf3

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// optionalIntAt is a number iperf3 prints only in some versions: ok is
// false where it is absent.
func optionalIntAt(t *testing.T, doc map[string]any, path ...string) (int64, bool) {
	t.Helper()
	var v any = doc
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		if v, ok = m[k]; !ok {
			return 0, false
		}
	}
	return jsondoc.Int(t, v), true
}

// Our client's iperf3 flags reach an iperf3 server in its parameters:
// -k as blockcount (not num), --fq-rate as fqrate, -S as TOS; and -4, -X
// and --cntl-ka shape our own sockets without the server noticing.
func TestClientIperf3FlagsAgainstIperf3(t *testing.T) {
	srv, port := startIperf3Server(t)
	const blocks, length = 1024, 64 << 10 // 64 MiB: what is in flight at the end is a small part
	s := clientSpec(func(s *spec.Spec) {
		s.Duration, s.Length, s.Blocks, s.Bytes = 0, length, blocks, blocks*length
		s.FQRate, s.TOS = 4e9, 0x10
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunClient(ctx, ClientConfig{
		Host: "localhost", Port: port, Spec: s, Family: "4", BindDevice: "lo",
		KeepAlive: &net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 3},
	})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	doc := srv.json(t)
	checkAgainstIperf3Server(t, res, doc)
	if got := jsondoc.IntAt(t, doc, "start", "test_start", "blocks"); got != blocks {
		t.Errorf("iperf3's test_start blocks = %d, want %d (-k as blockcount)", got, blocks)
	}
	if got := jsondoc.IntAt(t, doc, "start", "test_start", "bytes"); got != 0 {
		t.Errorf("iperf3's test_start bytes = %d, want 0: -k goes without -n, as iperf3 requires", got)
	}
	// iperf3's server stops reading at TEST_END, which follows the last
	// block into the socket, so what it received may fall short; what
	// was sent may not.
	if got := directionBytes(res)["client"][0]; got != blocks*length {
		t.Errorf("sent %d bytes, want %d blocks of %d", got, blocks, length)
	}
	if got := jsondoc.IntAt(t, doc, "start", "test_start", "tos"); got != 0x10 {
		t.Errorf("iperf3's test_start tos = %d, want 16", got)
	}
	if got, ok := optionalIntAt(t, doc, "start", "fq_rate"); ok && got != 4e9 {
		t.Errorf("iperf3's fq_rate = %d, want 4000000000", got)
	}
	for _, st := range res.Local.Streams {
		if !strings.HasPrefix(st.LocalAddr, "127.") {
			t.Errorf("-4: stream %d from %s, want IPv4", st.ID, st.LocalAddr)
		}
	}
}

// -6 and -L: the client reaches the server over IPv6 and its TCP data
// connection carries the flow label, which the kernel leased for it.
func TestClientFlowLabelAgainstIperf3(t *testing.T) {
	if ln, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		ln.Close()
	}
	srv, port := startIperf3Server(t)
	const label = 0x2345
	s := clientSpec(func(s *spec.Spec) { s.FlowLabel = label })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunClient(ctx, ClientConfig{Host: "::1", Port: port, Spec: s, Family: "6"})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	checkAgainstIperf3Server(t, res, srv.json(t))
	if b, err := os.ReadFile("/proc/net/ip6_flowlabel"); err == nil && !strings.Contains(string(b), fmt.Sprintf("%05x ", label)) {
		t.Errorf("flow label %05x was not leased; the kernel lists:\n%s", label, b)
	}
}

// UDP with -k and --dont-fragment against iperf3: the server counts the
// blocks as datagrams, and accepts dont_fragment.
func TestClientUDPBlocksAgainstIperf3(t *testing.T) {
	srv, port := startIperf3Server(t)
	const blocks, length = 200, 1000
	s := clientSpec(func(s *spec.Spec) {
		s.Protocol, s.Duration, s.Length, s.Blocks, s.Bytes = spec.UDP, 0, length, blocks, blocks*length
		s.Rate, s.DontFragment = 10e6, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	doc := srv.json(t)
	if got := jsondoc.IntAt(t, doc, "start", "test_start", "blocks"); got != blocks {
		t.Errorf("iperf3's test_start blocks = %d, want %d", got, blocks)
	}
	if got := directionBytes(res)["client"][0]; got != blocks*length {
		t.Errorf("sent %d bytes, want %d datagrams of %d", got, blocks, length)
	}
}

// An iperf3 client's -k, --fq-rate and -S reach the test our server
// runs, which sends and counts as iperf3's would.
func TestServeIperf3ClientHabits(t *testing.T) {
	s := newTestServer(t, nil)
	const blocks, length = 40, 64 << 10
	doc := runIperf3Client(t, s, "-R", "-k", "40", "-l", "64K", "--fq-rate", "500M", "-S", "16")
	sr := s.next(t)
	checkIperf3Client(t, sr, doc)
	sp := sr.res.Spec
	if sp.Blocks != blocks || sp.Bytes != blocks*length || sp.FQRate != 500e6 || sp.TOS != 16 {
		t.Errorf("our server's spec: blocks %d, bytes %d, fq-rate %v, tos %d; want %d, %d, 5e8, 16",
			sp.Blocks, sp.Bytes, sp.FQRate, sp.TOS, blocks, blocks*length)
	}
	if got := directionBytes(sr.res)["server"][0]; got != blocks*length {
		t.Errorf("our server sent %d bytes, want %d blocks of %d", got, blocks, length)
	}
}

// An iperf3 client's --dont-fragment reaches our server's UDP sockets.
func TestServeIperf3ClientDontFragment(t *testing.T) {
	s := newTestServer(t, nil)
	doc := runIperf3Client(t, s, "-u", "-b", "10M", "-l", "1000", "-k", "100", "--dont-fragment")
	sr := s.next(t)
	checkIperf3Client(t, sr, doc)
	if !sr.res.Spec.DontFragment || sr.res.Spec.Blocks != 100 {
		t.Errorf("our server's spec: dont-fragment %v, blocks %d; want true and 100", sr.res.Spec.DontFragment, sr.res.Spec.Blocks)
	}
}

// writeRandomFile is a file of n random bytes in the test's directory.
func writeRandomFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return name, b
}

// -F both ways with iperf3's own -F: what one end reads from its file
// is what the other end writes to its own, byte for byte.
func TestFileWithIperf3(t *testing.T) {
	const size = 3<<20 + 12345 // not a whole number of blocks
	t.Run("client sends", func(t *testing.T) {
		src, want := writeRandomFile(t, size)
		out := filepath.Join(t.TempDir(), "out")
		srv, port := startIperf3Server(t, "-F", out)
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := clientSpec(func(s *spec.Spec) { s.Duration, s.Bytes, s.Length = 0, size, 128<<10 })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s, File: f})
		if err != nil {
			t.Fatalf("RunClient: %v", err)
		}
		if sent := directionBytes(res)["client"][0]; sent != size {
			t.Fatalf("our client sent %d bytes of the file's %d", sent, size)
		}
		doc := srv.json(t) // the server has exited: its file is complete
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, want) {
			return
		}
		// iperf3's server closes its data sockets when the client's
		// TEST_END arrives, whatever they still hold unread, whoever the
		// client (iperf_server_api.c, case TEST_END); our client sends
		// it once the receiver's kernel has acknowledged every byte, but
		// on a loaded machine iperf3's reader can still be behind. Then
		// its file must be the start of ours, and what iperf3 says it read.
		read := jsondoc.IntAt(t, doc, "end", "sum_received", "bytes")
		if len(got) >= len(want) || !bytes.Equal(got, want[:len(got)]) || read != int64(len(got)) {
			t.Fatalf("iperf3 wrote %d bytes (it says it read %d), not the %d the file holds, nor the start of them", len(got), read, len(want))
		}
		t.Logf("iperf3 closed its socket at TEST_END with %d of %d bytes unread (as it does with any client); its file holds the %d it read, byte for byte", len(want)-len(got), len(want), len(got))
	})
	t.Run("client receives", func(t *testing.T) {
		src, want := writeRandomFile(t, size)
		_, port := startIperf3Server(t, "-F", src)
		out := filepath.Join(t.TempDir(), "out")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s := clientSpec(func(s *spec.Spec) { s.Reverse, s.Duration, s.Length = true, 5*time.Second, 128<<10 })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s, File: f})
		if err != nil {
			t.Fatalf("RunClient: %v", err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("we wrote %d bytes (received %d), not the %d iperf3's file holds",
				len(got), directionBytes(res)["server"][1], len(want))
		}
	})
}

// --rcv-timeout against iperf3: the server sends one datagram a second,
// so a client that waits at most 300 ms ends the test with the error.
func TestClientRcvTimeoutAgainstIperf3(t *testing.T) {
	_, port := startIperf3Server(t)
	s := clientSpec(func(s *spec.Spec) {
		s.Protocol, s.Reverse, s.Length, s.Rate, s.Duration = spec.UDP, true, 1000, 8000, 5*time.Second
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s, RcvTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no data received for 300ms (--rcv-timeout)") {
		t.Fatalf("err = %v, want the receive timeout", err)
	}
	if took := time.Since(start); took >= s.Duration {
		t.Errorf("the test took %v: the timeout did not end it", took)
	}
}

// An iperf3 client's client-side flags (-A n,m sends server_affinity,
// which our server, running many tests at once, does not act on; -4)
// leave its test as it was: accepted and run. (--cntl-ka is newer than
// iperf3 3.12.)
func TestServeIperf3ClientLocalFlags(t *testing.T) {
	s := newTestServer(t, nil)
	doc := runIperf3Client(t, s, "-t", "1", "-4", "-A", "0,0")
	checkIperf3Client(t, s.next(t), doc)
}
