package mcast

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/mcast/mcasttest"
)

type receiverRun struct {
	events []FlowEvent
	err    error
	done   chan struct{} // closed when events and err are set
}

// startReceiver joins g in ns and runs a receiver until ctx is done or,
// with once, its first flow ends.
func startReceiver(t *testing.T, ctx context.Context, ns string, g Group, once bool, wg *sync.WaitGroup) *receiverRun {
	t.Helper()
	var c *net.UDPConn
	mcasttest.InNetns(t, ns, func() (err error) { c, err = Listen(ctx, g); return err })
	rr := &receiverRun{done: make(chan struct{})}
	ev := make(chan FlowEvent, 1024)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(rr.done)
		defer c.Close()
		r := NewReceiver(g.Addr, ReceiveConfig{Once: once, IdleTimeout: 3 * time.Second})
		done := make(chan struct{})
		go func() { rr.events = collect(context.Background(), ev); close(done) }()
		rr.err = r.Run(ctx, c, ev)
		close(ev)
		<-done
	}()
	return rr
}

func ended(t *testing.T, r *receiverRun) []FlowEvent {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	var out []FlowEvent
	for _, e := range r.events {
		if e.Kind == FlowEnded {
			out = append(out, e)
		}
	}
	return out
}

// TestOneHostBothFamilies: a sender and, on the same host, two
// any-source receivers, a source-specific one of the sender and one of
// another source, in IPv4 (the route chooses the interface) and IPv6
// (the interface named). Every receiver that should hears every datagram;
// the one of another source hears none.
func TestOneHostBothFamilies(t *testing.T) {
	mcasttest.NeedRoot(t)
	ns := mcasttest.OneHost(t)
	for _, tc := range []struct {
		name, group, src, other, dev string
	}{
		{"IPv4", "239.39.0.1:5001", "10.39.0.1", "10.39.0.99", ""},
		{"IPv6", "[ff3e::3939]:5001", "fd39::1", "fd39::99", "v0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ga := netip.MustParseAddrPort(tc.group)
			src := netip.MustParseAddr(tc.src)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			otherCtx, stopOther := context.WithCancel(ctx)
			var wg sync.WaitGroup
			recv := []*receiverRun{
				startReceiver(t, ctx, ns, Group{Addr: ga, Interface: tc.dev}, true, &wg),
				startReceiver(t, ctx, ns, Group{Addr: ga, Interface: tc.dev}, true, &wg),
				startReceiver(t, ctx, ns, Group{Addr: ga, Source: src, Interface: tc.dev}, true, &wg),
			}
			other := startReceiver(t, otherCtx, ns, Group{Addr: ga, Source: netip.MustParseAddr(tc.other), Interface: tc.dev}, false, &wg)
			var c *SendConn
			mcasttest.InNetns(t, ns, func() (err error) {
				c, err = Dial(Group{Addr: ga, Interface: tc.dev}, SendOptions{TTL: 1, Bind: src})
				return err
			})
			defer c.Close()
			const n, length = 300, 1000
			tot, err := Send(ctx, c, SendConfig{Length: length, Rate: 4e6, Bytes: n * length, Port: 5001}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tot.Datagrams != n || tot.Errors != 0 {
				t.Fatalf("sent %d datagrams (%d refused), want %d", tot.Datagrams, tot.Errors, n)
			}
			for i, r := range recv[:3] {
				wgWaitOne(t, ctx, r)
				e := ended(t, r)
				if len(e) != 1 {
					t.Fatalf("receiver %d: %d flows, want 1", i, len(e))
				}
				u := e[0].UDP
				if !e[0].ByFIN || u.Received != n || u.Lost != 0 || u.Expected != n || e[0].Bytes != n*length {
					t.Errorf("receiver %d: received %d lost %d of %d, %d bytes, by FIN %v; want all %d", i, u.Received, u.Lost, u.Expected, e[0].Bytes, e[0].ByFIN, n)
				}
				if u.TimestampSource != "kernel" || u.JitterSamples != n-1 {
					t.Errorf("receiver %d: arrivals timed by %q, %d jitter samples; want the kernel's, %d", i, u.TimestampSource, u.JitterSamples, n-1)
				}
				if e[0].From.Addr() != src {
					t.Errorf("receiver %d: sender %v, want %v", i, e[0].From, src)
				}
			}
			stopOther()
			wg.Wait()
			if len(other.events) != 0 || other.err != nil {
				t.Errorf("the receiver of source %s heard %d events (err %v), want none", tc.other, len(other.events), other.err)
			}
		})
	}
}

// wgWaitOne waits for one receiver's Run to return (its events are set
// then), bounded by ctx.
func wgWaitOne(t *testing.T, ctx context.Context, r *receiverRun) {
	t.Helper()
	select {
	case <-ctx.Done():
		t.Fatal("receiver did not finish")
	case <-r.done:
	}
}
