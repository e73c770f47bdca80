package rr

import (
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// tx is one transaction's injected timings, in ms: the path's network
// RTT, the server's T3 − T2, the client's receive delay (T4 less the
// kernel's receive time) and its send share (T1 to the send's return,
// inside the network RTT as the probe measures it).
type tx struct{ net, srv, rx, send float64 }

func ms(v float64) int64 { return int64(v * float64(time.Millisecond)) }

func accumulate(txs []tx) *accumulator {
	a := newAccumulator("loaded", 64, 64)
	base := int64(1_700_000_000) * int64(time.Second)
	for i, x := range txs {
		t1 := base + int64(i)*ms(1000)
		// The request leaves at T1 + send; half the path each way.
		t2 := t1 + ms(x.send) + ms(x.net/2)
		t3 := t2 + ms(x.srv)
		rx := t3 + ms(x.net/2)
		t4 := rx + ms(x.rx)
		a.add(sample{t1: t1, t2: t2, t3: t3, t4: t4, rx: rx, sendNs: ms(x.send), rtt: time.Duration(t4 - t1), done: time.Unix(0, t4)})
	}
	return a
}

// TestHostFlagsFromTheProbesOwnTimestamps: the truth matrix's cell at
// 19 ms beside a CPU hog, rebuilt with injected timings. The client's
// receive delay is removed from the network RTT (the kernel stamped the
// arrival); the client's send share and the server's time that remain
// or were large are named on the max and the p99 they touch, with the
// figure over the transactions no host delayed beside it.
func TestHostFlagsFromTheProbesOwnTimestamps(t *testing.T) {
	var txs []tx
	for i := 0; i < 200; i++ {
		txs = append(txs, tx{net: 19 + float64(i%10)/10}) // 19.0–19.9 ms
	}
	// 3 transactions (1.5%) whose client thread was descheduled before
	// its send returned: 22.8 ms inside the network RTT, which the probe
	// cannot remove (the request left somewhere between T1 and then).
	txs = append(txs, tx{net: 19, send: 22.8}, tx{net: 19.5, send: 10}, tx{net: 19.2, send: 5})
	// One whose response waited 40 ms in the client's socket: removed.
	txs = append(txs, tx{net: 19.1, rx: 40})
	// One the server sat on for 30 ms: its T3 − T2, removed.
	txs = append(txs, tx{net: 19.3, srv: 30})
	a := accumulate(txs)
	p := a.point(0, false)

	if p.NetworkRTT.Max < 41_700 || p.NetworkRTT.Max > 41_900 {
		t.Fatalf("network RTT max %.3f ms, want the send-delayed 41.8 ms", p.NetworkRTT.Max/1e3)
	}
	if p.ClientTime == nil || p.ClientTime.Max < 39_600 || p.ClientTime.Max > 40_400 { // two significant digits: 1 %
		t.Fatalf("client time %+v, want max 40 ms", p.ClientTime)
	}
	flags := map[string]result.RRHostFlag{}
	for _, f := range p.HostFlags {
		flags[f.Figure+"/"+f.Host] = f
	}
	mx, ok := flags["max/client"]
	if !ok || mx.ShareUs != 22_800 || mx.NetworkRTTUs != p.NetworkRTT.Max {
		t.Errorf("max not named on the client with its 22.8 ms: %+v", p.HostFlags)
	}
	if mx.WithoutUs == nil || *mx.WithoutUs > 20_000 || *mx.WithoutUs < 19_800 {
		t.Errorf("max without host-delayed transactions: %v, want 19.9 ms", mx.WithoutUs)
	}
	if _, ok := flags["max/server"]; ok {
		t.Errorf("max named on the server, whose time was not in it: %+v", p.HostFlags)
	}
	pc, ok := flags["p99/client"]
	if !ok || pc.Transactions != 4 || pc.ShareUs != 40_000 {
		t.Errorf("p99 client flag: %+v", p.HostFlags)
	}
	if ps, ok := flags["p99/server"]; !ok || ps.Transactions != 1 || ps.ShareUs != 30_000 {
		t.Errorf("p99 server flag: %+v", p.HostFlags)
	}
	if pc.WithoutUs == nil || *pc.WithoutUs >= p.NetworkRTT.P99 {
		t.Errorf("p99 %.3f ms without host-delayed transactions %v: want below", p.NetworkRTT.P99/1e3, pc.WithoutUs)
	}
}

// TestHostFlagsQuiet: transactions no host delayed beyond scheduling's
// usual noise carry no flag, however the path's own RTT varies.
func TestHostFlagsQuiet(t *testing.T) {
	var txs []tx
	for i := 0; i < 300; i++ {
		txs = append(txs, tx{net: 19 + float64(i%50), srv: 0.02, rx: 0.03, send: 0.01}) // a queue filling: the network's
	}
	p := accumulate(txs).point(0, false)
	if len(p.HostFlags) != 0 {
		t.Errorf("flags on a quiet host: %+v", p.HostFlags)
	}
	if p.NetworkRTT.Max < 67_900 {
		t.Errorf("network RTT max %.3f ms, want the queue's 68 ms kept", p.NetworkRTT.Max/1e3)
	}
}

// TestHostFlagsEveryTransactionDelayed: with no clean transaction the
// flags still name the host, with no figure beside.
func TestHostFlagsEveryTransactionDelayed(t *testing.T) {
	txs := []tx{{net: 19, send: 5}, {net: 19, send: 6}}
	p := accumulate(txs).point(0, false)
	if len(p.HostFlags) != 2 || p.HostFlags[0].Figure != "max" || p.HostFlags[1].Figure != "p99" || p.HostFlags[1].WithoutUs != nil {
		t.Errorf("flags: %+v", p.HostFlags)
	}
}
