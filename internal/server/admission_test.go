package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
)

// dialFrom opens a TCP connection to the server from a given loopback
// address (127.0.0.0/8 has many).
func dialFrom(t *testing.T, ts *testServer, src string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", ts.Addr().String())
}

// holdSilent opens n connections from each source that never say
// anything; they are closed when the test ends.
func holdSilent(t *testing.T, ts *testServer, sources []string, n int) {
	t.Helper()
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for _, src := range sources {
		for range n {
			c, err := dialFrom(t, ts, src)
			if err != nil {
				continue // the server closed one at once: that is its job
			}
			conns = append(conns, c)
		}
	}
}

// 1,100 silent connections from four addresses can't hold every
// handshake place: an allowed client with the right key still runs its
// test, without waiting for the silent ones' deadlines.
func TestSilentConnectionsDoNotLockOut(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.Keys = testKeys()
		c.HandshakeTimeout = 20 * time.Second
		c.Limits.FirstByteTimeout = 20 * time.Second // no deadline rescues the client: only the shedding can
	})
	holdSilent(t, ts, []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}, 275)
	waitFor(t, func() bool { return ts.Stats().Handshakes >= DefaultMaxHandshakes })
	began := time.Now()
	_, err := runWith(ts, quickSpec(), func(c *session.ClientConfig) {
		c.Auth = &auth.Credential{User: "bob", Key: []byte("fedcba9876543210fedc")}
	})
	if err != nil {
		t.Fatalf("an allowed client with the right key: %v", err)
	}
	took := time.Since(began)
	t.Logf("beside 1,100 silent connections a 1 s test took %v; %d silent connections shed", took.Round(time.Millisecond), ts.Stats().Shed)
	if took > 10*time.Second {
		t.Fatalf("the test took %v", took)
	}
	if h := ts.Stats().Handshakes; h > DefaultMaxHandshakes {
		t.Fatalf("%d connections in the handshake, over the cap", h)
	}
}

// With --allow, connections from outside the list never take the places
// of the allowed: they are refused at accept (counted there), a few of
// them told why, the rest closed at once.
func TestAllowListCheckedAtAccept(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.ACL = auth.ACL{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		c.Limits.FirstByteTimeout = 20 * time.Second
		c.HandshakeTimeout = 20 * time.Second
	})
	holdSilent(t, ts, []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}, 275)
	waitFor(t, func() bool { return ts.Stats().Denied >= 1100 })
	if h := ts.Stats().Handshakes; h != 0 {
		t.Fatalf("%d refused connections hold handshake places", h)
	}
	mustRun(t, ts, quickSpec())
	// A refused client that speaks is still told why.
	_, err := runWithBind(ts, "127.0.0.9")
	if err == nil || !strings.Contains(err.Error(), "outside every --allow prefix") {
		t.Fatalf("a refused client: %v", err)
	}
}

func runWithBind(ts *testServer, bind string) (any, error) {
	return runWith(ts, quickSpec(), func(c *session.ClientConfig) { c.Bind = bind })
}

// Wrong keys from one source are slowed to the limiter's rate; another
// source with the right key is not, and the log gets one line for the
// source, not one per try.
func TestWrongKeysAreSlowed(t *testing.T) {
	var logs syncbuf.Buffer
	ts := startServer(t, func(c *Config) {
		c.Keys = testKeys()
		c.Logger = jsonLogger(&logs)
	})
	wrong := &auth.Credential{User: "alice", Key: []byte("not-alices-key-0000")}
	deadline := time.Now().Add(3 * time.Second)
	tries, verdicts := 0, 0
	began := time.Now()
	for time.Now().Before(deadline) {
		_, err := runWith(ts, quickSpec(), func(c *session.ClientConfig) {
			c.Bind, c.Auth, c.ConnectTimeout = "127.0.0.7", wrong, time.Second
		})
		tries++
		if errors.Is(err, auth.ErrFailed) {
			verdicts++
		}
	}
	rate := float64(verdicts) / time.Since(began).Seconds()
	t.Logf("%d tries in 3 s, %d reached a verdict (%.1f/s); %d turned away at accept", tries, verdicts, rate, ts.Stats().Throttled)
	if rate >= 10 {
		t.Fatalf("wrong keys reached a verdict %.1f times a second", rate)
	}
	if ts.Stats().Throttled == 0 {
		t.Fatal("no connection was turned away")
	}
	if _, err := runWith(ts, quickSpec(), func(c *session.ClientConfig) {
		c.Bind, c.Auth = "127.0.0.1", &auth.Credential{User: "bob", Key: []byte("fedcba9876543210fedc")}
	}); err != nil {
		t.Fatalf("another source with the right key: %v", err)
	}
	if n := strings.Count(logs.String(), "authentication failed"); n != 1 {
		t.Fatalf("%d log lines for one source's wrong keys, want 1", n)
	}
}

func TestGateShedsTheLargestSilentHolder(t *testing.T) {
	g := newGate(4, 3)
	t0 := time.Unix(0, 0)
	conn := func() net.Conn { a, b := net.Pipe(); t.Cleanup(func() { a.Close(); b.Close() }); return a }
	var slots []*slot
	for i, c := range []string{"a", "a", "a", "b"} {
		sl, shed, ok := g.enter(c, conn(), t0.Add(time.Duration(i)*time.Second))
		if !ok || shed != nil {
			t.Fatalf("entry %d: %v %v", i, ok, shed)
		}
		slots = append(slots, sl)
	}
	g.spoke(slots[0]) // a's first has spoken: not shed
	// Full: c takes the place of a's oldest silent one.
	_, shed, ok := g.enter("c", conn(), t0.Add(5*time.Second))
	if !ok || shed != slots[1].conn {
		t.Fatalf("shed %v, want a's second connection", shed)
	}
	// Full again; a holds 2, b 1, c 1: d (0) sheds a's last silent one.
	_, shed, ok = g.enter("d", conn(), t0.Add(6*time.Second))
	if !ok || shed != slots[2].conn {
		t.Fatalf("shed %v, want a's third connection", shed)
	}
	// Now a (1 spoken), b, c, d hold one each: nobody holds more than a
	// newcomer would, so e is refused.
	if _, _, ok := g.enter("e", conn(), t0.Add(7*time.Second)); ok {
		t.Fatal("a newcomer shed an equal holder")
	}
	// A shed place is not given back twice.
	g.leave(slots[1])
	if g.count() != 4 {
		t.Fatalf("count %d after leaving a shed slot", g.count())
	}
	for i := range 3 {
		if _, _, ok := g.enter(fmt.Sprint("x", i), conn(), t0); ok {
			t.Fatal("entered a full gate of equal holders")
		}
	}
}

func jsonLogger(w *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
