//go:build linux

package lab

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/lab/labtest"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
)

// The acceptance tests in accept_wireperf_*_test.go measure with wireperf
// itself: its server in host b, its client in host a, and the figures
// wireperf reports compared with the lab's ground truth.
//
// Where each end runs, and why:
//
//   - The server runs as a separate process inside b (this test binary
//     again, through `ip netns exec`: startServer, labtest.StartServer),
//     as `wireperf lab exec NAME b -- wireperf -s` would. It cannot run
//     in this process: Host.Do puts only the calling OS thread in b, and
//     the server's UDP port mux opens each stream's connected socket
//     later, from its own goroutine, on whatever thread the runtime
//     picks; that socket lands in the root namespace, where binding b's
//     address fails ("cannot assign requested address"). Reading the
//     host's UDP SNMP counters has the same problem: /proc/net/snmp
//     follows the process's main thread, not the calling thread. A whole
//     process inside b has neither problem, and its End.UDPCounters are
//     b's.
//   - The client runs in this process, inside a.Do: session.RunClient dials
//     the control connection and every data socket from the goroutine that
//     calls it, which Do keeps on a thread inside a for the whole call; the
//     goroutines it starts only use sockets it already has. wpRun checks
//     the streams' addresses to prove it. (The client's own End.UDPCounters
//     are read through /proc/net/snmp and so describe the root namespace;
//     no test here uses them.)

// wpObserver calls started once every connection is up, before any data
// moves (session.Observer's Started); the test is held until it returns.
// interval, when set, sees each row as the client shows it.
type wpObserver struct {
	started  func()
	interval func(result.IntervalRow)
}

func (o *wpObserver) Started(*result.Result) {
	if o.started != nil {
		o.started()
	}
}

func (o *wpObserver) Interval(_ *result.Result, row result.IntervalRow) {
	if o.interval != nil {
		o.interval(row)
	}
}

// wpRun runs wireperf's client in host from against the server at to:port
// and returns the result. started, if not nil, runs after every connection
// is up and before the data starts. It fails the test if the test failed
// or if a stream's addresses show a socket outside the lab hosts.
func wpRun(t *testing.T, from, to *Host, port int, sp spec.Spec, started func()) *result.Result {
	t.Helper()
	return wpRunObserved(t, from, to, port, sp, &wpObserver{started: started})
}

// wpRunObserved is wpRun with an observer of the test's start and rows.
func wpRunObserved(t *testing.T, from, to *Host, port int, sp spec.Spec, obs *wpObserver) *result.Result {
	t.Helper()
	if err := sp.Validate(); err != nil {
		t.Fatal(err)
	}
	var res *result.Result
	var runErr error
	err := from.Do(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), sp.Duration+60*time.Second)
		defer cancel()
		res, runErr = session.RunClient(ctx, session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: to.Addr.String(), Port: port, ConnectTimeout: 10 * time.Second, Spec: sp,
			Logger: labtest.Quiet(),
		}, Observer: obs})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runErr != nil {
		t.Fatalf("wireperf test from %s to %s failed: %v", from.Name, to.Name, runErr)
	}
	wpCheckAddrs(t, res, from, to)
	return res
}

// wpRunRouterIdle is wpRun through l's router for a test with an omitted
// start, with the time the router stood idle while packets were due
// (RouterIdle) from the row that ends the omitted start (shown about a
// round trip after its end) to the test's end: the span a receiver total
// after -O covers.
func wpRunRouterIdle(t *testing.T, l *Lab, from, to *Host, port int, sp spec.Spec) (*result.Result, time.Duration) {
	t.Helper()
	if sp.Omit <= 0 {
		t.Fatal("wpRunRouterIdle: the test has no omitted start")
	}
	var start RouterStats
	startErr := errors.New("no omitted row was shown")
	obs := &wpObserver{interval: func(row result.IntervalRow) {
		if row.Omitted { // the last omitted row wins
			start, startErr = l.RouterStats()
		}
	}}
	res := wpRunObserved(t, from, to, port, sp, obs)
	end, err := l.RouterStats()
	if err != nil {
		t.Fatal(err)
	}
	if startErr != nil {
		t.Fatalf("the router's counters at the end of the omitted start: %v", startErr)
	}
	idle := RouterIdle(start, end)
	t.Logf("the router stood idle %.1f ms while packets were due, after the omitted start", float64(idle)/1e6)
	return res, idle
}

// wpCheckAddrs verifies that every stream ran between the two hosts'
// addresses: the client's sockets were opened inside from, the server's
// inside to.
func wpCheckAddrs(t *testing.T, res *result.Result, from, to *Host) {
	t.Helper()
	hostOf := func(hp string) string {
		h, _, err := net.SplitHostPort(hp)
		if err != nil {
			return hp
		}
		return h
	}
	if len(res.Local.Streams) == 0 || len(res.Remote.Streams) != len(res.Local.Streams) {
		t.Fatalf("streams: %d local, %d remote", len(res.Local.Streams), len(res.Remote.Streams))
	}
	for _, s := range res.Local.Streams {
		if hostOf(s.LocalAddr) != from.Addr.String() || hostOf(s.RemoteAddr) != to.Addr.String() {
			t.Fatalf("client stream %d ran %s → %s, not %s → %s", s.ID, s.LocalAddr, s.RemoteAddr, from.Addr, to.Addr)
		}
	}
	for _, s := range res.Remote.Streams {
		if hostOf(s.LocalAddr) != to.Addr.String() || hostOf(s.RemoteAddr) != from.Addr.String() {
			t.Fatalf("server stream %d ran %s ← %s, not %s ← %s", s.ID, s.LocalAddr, s.RemoteAddr, to.Addr, from.Addr)
		}
	}
}

// wpFlow returns the single flow of a one-stream test with both ends'
// views, failing the test if either is missing.
func wpFlow(t *testing.T, res *result.Result) result.Flow {
	t.Helper()
	fl := res.Flows()
	if len(fl) != 1 || fl[0].Sent == nil || fl[0].Received == nil {
		t.Fatalf("want one flow with both views, have %+v", fl)
	}
	return fl[0]
}

// wpUDPFlow is wpFlow for a UDP test: the sender's and receiver's UDP
// figures.
func wpUDPFlow(t *testing.T, res *result.Result) (sent, got *result.UDP) {
	t.Helper()
	f := wpFlow(t, res)
	if f.Sent.UDP == nil || f.Received.UDP == nil {
		t.Fatalf("flow lacks UDP figures: sent %+v received %+v", f.Sent.UDP, f.Received.UDP)
	}
	return f.Sent.UDP, f.Received.UDP
}

// wpUDPSpec is a one-stream UDP test from client to server.
func wpUDPSpec(d time.Duration) spec.Spec {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = spec.DefaultUDPLength
	s.Duration = d
	s.Interval = time.Second
	return s
}

// wpBypassRouterForTCP makes the router host forward TCP by its main table,
// around the impairment router, so that the router's counters see only
// the UDP test: without it wireperf's control connection crosses the
// router too, and its segments are lost, duplicated and re-ordered with
// the rest. The rule's preference is below the router's (1000, 1001).
func wpBypassRouterForTCP(t *testing.T, l *Lab) {
	t.Helper()
	r := l.Host("r")
	if err := ip("-n", r.NS, "-4", "rule", "add", "pref", "100", "ipproto", "tcp", "lookup", "main"); err != nil {
		t.Fatalf("TCP bypass rule: %v", err)
	}
}

// wpQuiescentAtoB waits until the router's a→b direction holds no packet
// and its input count has not moved for settle, then returns the
// counters. It gives up after 10 s and returns what it has. It only
// reports errors, so that a session.Observer may call it from the
// client's goroutine (t.Fatal must not be called there).
func wpQuiescentAtoB(l *Lab, settle time.Duration) (DirStats, error) {
	deadline := time.Now().Add(10 * time.Second)
	var last DirStats
	stableSince := time.Now()
	for i := 0; ; i++ {
		st, err := l.RouterStats()
		if err != nil {
			return DirStats{}, err
		}
		ab := st.AtoB
		if i == 0 || ab.Counters.In != last.Counters.In || ab.QueuedPackets != 0 {
			stableSince = time.Now()
		}
		last = ab
		if ab.QueuedPackets == 0 && time.Since(stableSince) >= settle || time.Now().After(deadline) {
			return ab, nil
		}
		time.Sleep(10 * time.Millisecond) // bounded poll: the router's counters, until the deadline above
	}
}

// wpMinus is b − a for the router's cumulative counters (the gauges are b's).
func wpMinus(b, a DirStats) DirStats {
	d := b
	d.In -= a.In
	d.InBytes -= a.InBytes
	d.Out -= a.Out
	d.OutBytes -= a.OutBytes
	d.DroppedLoss -= a.DroppedLoss
	d.DroppedQueue -= a.DroppedQueue
	d.DroppedLimit -= a.DroppedLimit
	d.Duplicated -= a.Duplicated
	d.Reordered -= a.Reordered
	d.Delayed -= a.Delayed
	d.Held -= a.Held
	d.Discarded -= a.Discarded
	d.ReadErrors -= a.ReadErrors
	d.WriteErrors -= a.WriteErrors
	d.Oversize -= a.Oversize
	d.Writes -= a.Writes
	if a.TunIn != nil && b.TunIn != nil {
		in := *b.TunIn
		in.TxDropped -= a.TunIn.TxDropped
		d.TunIn = &in
	}
	return d
}

// wpNoiseProbe measures the lab's own delay noise while a test runs: a
// plain UDP stream of small datagrams, one every spacing (time.Sleep, so
// it costs next to no CPU, unlike a spinning pacer), from host from to host
// to, each stamped with its send time and received with the kernel's
// receive timestamp. It keeps RFC 3550's J over the transit times and
// records it every 50 datagrams, after the first 50. Stop it with the returned function,
// which returns the readings. It sends at most until stop is called or
// a minute has passed.
func wpNoiseProbe(t *testing.T, from, to *Host, spacing time.Duration) (stop func() []float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	addr := net.JoinHostPort(to.Addr.String(), "5399")
	lc := &net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		})
		return errors.Join(err, serr)
	}}
	pc, err := to.ListenPacket(ctx, lc, "udp4", addr)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	conn, err := from.Dial(ctx, nil, "udp4", addr)
	if err != nil {
		cancel()
		pc.Close()
		t.Fatal(err)
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		var b [16]byte
		for seq := uint64(0); ctx.Err() == nil; seq++ {
			binary.BigEndian.PutUint64(b[:], seq)
			binary.BigEndian.PutUint64(b[8:], uint64(time.Now().UnixNano()))
			_, _ = conn.Write(b[:])
			time.Sleep(spacing) // load generator: the probe's spacing between datagrams
		}
	}()
	readings := make(chan []float64, 1)
	go func() {
		var out []float64
		defer func() { readings <- out }()
		uc := pc.(*net.UDPConn)
		buf, oob := make([]byte, 64), make([]byte, 128)
		var j float64
		var prev int64
		n := 0
		for {
			_ = uc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			k, oobn, _, _, err := uc.ReadMsgUDP(buf, oob)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			if k < 16 {
				continue
			}
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				continue
			}
			var recv int64
			for _, m := range msgs {
				if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
					recv = int64(binary.NativeEndian.Uint64(m.Data))*1e9 + int64(binary.NativeEndian.Uint64(m.Data[8:]))
				}
			}
			if recv == 0 {
				continue
			}
			d := recv - int64(binary.BigEndian.Uint64(buf[8:]))
			if n > 0 {
				j += (math.Abs(float64(d-prev)) - j) / 16
			}
			prev = d
			n++
			if n%50 == 0 && n > 50 {
				out = append(out, j/1e6)
			}
		}
	}()
	return func() []float64 {
		cancel()
		<-sent
		conn.Close()
		r := <-readings
		pc.Close()
		return r
	}
}
