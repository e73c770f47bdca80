package iperf3

import (
	"bytes"
	"context"
	"io"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// needIperf3Flag skips t unless the iperf3 the tests run lists flag in
// its --help (--skip-rx-copy is 3.19's and later: Debian's 3.12 lacks
// it; set IPERF3 to a 3.21 build).
func needIperf3Flag(t *testing.T, flag string) {
	t.Helper()
	needIperf3(t)
	out, _ := exec.Command(iperf3Path, "--help").CombinedOutput()
	if !bytes.Contains(out, []byte(flag)) {
		t.Skipf("%s has no %s (iperf3 3.21 has; set IPERF3)", iperf3Path, flag)
	}
}

// Our client's --extra-data, --repeating-payload and --skip-rx-copy reach
// an iperf3 server: its -J document carries the string, escaped, as
// "extra_data", and its receiver, reading with MSG_TRUNC, counts the
// bytes we sent.
func TestClientPayloadFlagsAgainstIperf3(t *testing.T) {
	needIperf3Flag(t, "--skip-rx-copy")
	srv, port := startIperf3Server(t)
	const total = 32 << 20
	extra := "site=\"lab 3\"\ttab\\back"
	s := clientSpec(func(s *spec.Spec) {
		s.Duration, s.Length, s.Bytes = 0, 128<<10, total
		s.ExtraData, s.RepeatingPayload, s.SkipRxCopy = extra, true, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: s})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	doc := srv.json(t)
	if got := doc["extra_data"]; got != extra {
		t.Errorf("iperf3 server's extra_data = %q, want %q", got, extra)
	}
	if got := directionBytes(res)["client"][0]; got != total {
		t.Errorf("sent %d bytes, want %d", got, total)
	}
	// iperf3's server stops reading at TEST_END, so what it counted may
	// fall a little short of what was sent, never over.
	if got := jsondoc.IntAt(t, doc, "end", "sum_received", "bytes"); got > total || got < total/2 {
		t.Errorf("iperf3 server received %d bytes with --skip-rx-copy, sent %d", got, total)
	}
}

// An iperf3 3.21 client's --extra-data, --repeating-payload and
// --skip-rx-copy reach the test our server runs: its spec has them, its
// receivers count the bytes the client sent, and the client's document
// carries the string, in its own part and in our server's document
// (--get-server-output).
func TestServeIperf3ClientPayloadFlags(t *testing.T) {
	needIperf3Flag(t, "--skip-rx-copy")
	s := newTestServer(t, func(c *ServeConfig) { c.ServerOutput = emit.ServerOutput(false) }) // a -J server
	extra := `{"not":"json"}`
	doc := runIperf3Client(t, s, "-n", "16M", "--extra-data", extra, "--repeating-payload", "--skip-rx-copy", "--get-server-output")
	sr := s.next(t)
	checkIperf3Client(t, sr, doc)
	sp := sr.res.Spec
	if sp.ExtraData != extra || !sp.RepeatingPayload || !sp.SkipRxCopy {
		t.Errorf("our server's spec: extra data %q, repeating %v, skip-rx-copy %v; want %q, true, true", sp.ExtraData, sp.RepeatingPayload, sp.SkipRxCopy, extra)
	}
	if got := doc["extra_data"]; got != extra {
		t.Errorf("the iperf3 client's extra_data = %q, want %q", got, extra)
	}
	// Our server's own document, as the client shows it.
	if so, _ := doc["server_output_json"].(map[string]any); so == nil || so["extra_data"] != extra {
		t.Errorf("our server's document (server_output_json) lacks extra_data %q: %v", extra, so["extra_data"])
	}
	if got := directionBytes(sr.res)["client"]; got[0] != 16<<20 || got[1] != got[0] {
		t.Errorf("the client sent %d, our server received %d; want 16 MiB both", got[0], got[1])
	}
}

// iperf3 3.21's own --repeating-payload bytes are the pattern ours
// sends (spec.RepeatingPattern): a proxy on loopback between an iperf3
// client and our server keeps what the client sends on each connection,
// and the data connection's bytes after its cookie are the digits in
// sequence, from '0' at each block, exactly as spec.RepeatingPattern
// fills one.
func TestIperf3RepeatingPayloadIsOurPattern(t *testing.T) {
	needIperf3Flag(t, "--repeating-payload")
	s := newTestServer(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var conns []*bytes.Buffer
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port))
			if err != nil {
				c.Close()
				return
			}
			rec := &bytes.Buffer{}
			mu.Lock()
			conns = append(conns, rec)
			mu.Unlock()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
			go func() {
				var b bytes.Buffer
				_, _ = io.Copy(io.MultiWriter(up, &b), io.LimitReader(c, 4<<20)) // the test sends 1 MiB
				mu.Lock()
				rec.Write(b.Bytes())
				mu.Unlock()
				up.(*net.TCPConn).CloseWrite()
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	p := startIperf3(t, 30*time.Second, "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-n", "1M", "-l", "100000", "--repeating-payload", "-J")
	doc := p.json(t)
	checkIperf3Client(t, s.next(t), doc)
	mu.Lock()
	defer mu.Unlock()
	var data []byte
	for _, c := range conns {
		if c.Len() > len(data) {
			data = c.Bytes()
		}
	}
	if len(data) < CookieLen+1<<20 {
		t.Fatalf("the data connection carried %d bytes, want the cookie and 1 MiB", len(data))
	}
	data = data[CookieLen:]
	want := make([]byte, 100000)
	spec.RepeatingPattern(want, 0)
	if !bytes.HasPrefix(data, want) {
		t.Fatalf("iperf3's first block starts %q; ours %q", data[:12], want[:12])
	}
	// A block a write took only part of is sent again from its start, by
	// iperf3 as by us: each byte is the digit after the one before, or a
	// block's '0'.
	for i := 1; i < len(data); i++ {
		if c, prev := data[i], data[i-1]; c != '0' && c != prev+1 {
			t.Fatalf("byte %d is %q after %q: not the pattern", i, c, prev)
		}
	}
}
