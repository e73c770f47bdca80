package iperf3

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// testServer dispatches connections on one port the way internal/server
// does: the first 4 bytes tell the protocol; an iperf3 connection's 37
// bytes are a data connection of a running test (Registry.Deliver) or a
// new control connection (Serve).
type testServer struct {
	t       *testing.T
	ln      *net.TCPListener
	port    int
	reg     *Registry
	mux     *testMux
	cfg     ServeConfig
	results chan serveResult
	logs    *syncbuf.Buffer
	wg      sync.WaitGroup
	cancel  context.CancelFunc
}

type serveResult struct {
	res *result.Result
	err error
}

func newTestServer(t *testing.T, mod func(*ServeConfig)) *testServer {
	t.Helper()
	var ln *net.TCPListener
	var mux *testMux
	var port int
	for try := 0; ; try++ {
		var err error
		ln, err = net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		if mux, err = newTestMux(port); err == nil {
			break
		}
		_ = ln.Close()
		if try == 20 {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{t: t, ln: ln, port: port, reg: NewRegistry(), mux: mux, results: make(chan serveResult, 16), logs: &syncbuf.Buffer{}, cancel: cancel}
	s.cfg = ServeConfig{
		Registry: s.reg, UDP: mux, HandshakeTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mod != nil {
		mod(&s.cfg)
	}
	s.wg.Add(1)
	go s.accept(ctx)
	t.Cleanup(func() {
		cancel()
		_ = ln.Close()
		mux.close()
		s.wg.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", s.logs.String())
		}
	})
	return s
}

func (s *testServer) accept(ctx context.Context) {
	defer s.wg.Done()
	for {
		c, err := s.ln.AcceptTCP()
		if err != nil {
			return
		}
		at := time.Now()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handle(ctx, c, at)
		}()
	}
}

func (s *testServer) handle(ctx context.Context, c *net.TCPConn, at time.Time) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var first [4]byte
	if _, err := io.ReadFull(c, first[:]); err != nil || !CookiePrefix(first[:]) {
		_ = c.Close()
		return
	}
	var cookie Cookie
	copy(cookie[:], first[:])
	if _, err := io.ReadFull(c, cookie[4:]); err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if s.reg.Deliver(cookie, c, at) {
		return
	}
	res, err := Serve(ctx, c, cookie[:], s.cfg)
	s.results <- serveResult{res, err}
}

// next waits for the record of the next test the server ran.
func (s *testServer) next(t *testing.T) serveResult {
	t.Helper()
	select {
	case r := <-s.results:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the server reported no test")
		return serveResult{}
	}
}

func (s *testServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// testMux stands in for internal/udpmux: one unconnected socket on the
// port receives first datagrams; each match gets a new socket bound to
// the same port (SO_REUSEADDR/SO_REUSEPORT) and connected to its sender,
// which the kernel then prefers for that sender's datagrams.
type testMux struct {
	port int
	mu   sync.Mutex
	ln   *net.UDPConn
}

func reuseControl(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

func newTestMux(port int) (*testMux, error) {
	lc := net.ListenConfig{Control: reuseControl}
	pc, err := lc.ListenPacket(context.Background(), "udp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return nil, err
	}
	return &testMux{port: port, ln: pc.(*net.UDPConn)}, nil
}

func (m *testMux) close() { _ = m.ln.Close() }

func (m *testMux) Expect(ctx context.Context, match func([]byte, *net.UDPAddr) bool) (*net.UDPConn, []byte, *net.UDPAddr, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { _ = m.ln.SetReadDeadline(time.Now()) })
	defer stop()
	defer m.ln.SetReadDeadline(time.Time{})
	buf := make([]byte, 65536)
	for {
		n, from, err := m.ln.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, nil, ctx.Err()
			}
			return nil, nil, nil, err
		}
		if !match(buf[:n], from) {
			continue
		}
		d := net.Dialer{LocalAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: m.port}, Control: reuseControl}
		c, err := d.DialContext(ctx, "udp4", from.String())
		if err != nil {
			return nil, nil, nil, errors.Join(errors.New("testMux: connecting"), err)
		}
		return c.(*net.UDPConn), append([]byte(nil), buf[:n]...), from, nil
	}
}
