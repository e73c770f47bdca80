package rr

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// Histogram geometry, in ns: 1 ns to 100 s. The RTT histograms keep three
// significant digits (a bucket is at most 0.1 % wide: 20 ns at 20 µs);
// the others two (under 1 %). Longer values count as the maximum; the
// exact extremes are kept beside.
const (
	histMax      = int64(100 * time.Second)
	rttDigits    = 3
	otherDigits  = 2
	histogramsUs = "us"
)

func newHist(digits int) *hdrhistogram.Histogram { return hdrhistogram.New(1, histMax, digits) }

func record(h *hdrhistogram.Histogram, v int64) {
	_ = h.RecordValue(min(max(v, 1), histMax))
}

// HistogramOf turns an HDR histogram of values worth unitNs ns each into
// the result's sparse form, in µs, every value moved by shiftNs.
func HistogramOf(h *hdrhistogram.Histogram, unitNs, shiftNs float64) *result.Histogram {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	out := &result.Histogram{Unit: histogramsUs, Count: h.TotalCount()}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		out.Buckets = append(out.Buckets, result.HistogramBucket{
			From:  (float64(b.From)*unitNs + shiftNs) / 1e3,
			To:    (float64(b.To)*unitNs + shiftNs) / 1e3,
			Count: b.Count,
		})
	}
	return out
}

// accumulator gathers one point's transactions.
type accumulator struct {
	label     string
	req, resp int

	sent, completed, lost, late, errors int64
	first, last                         time.Time // first send, last completion

	rtt, network, server *hdrhistogram.Histogram // ns
	// client is the client's receive delay (T4 less the kernel's receive
	// time), when the socket gives one; clean is the network RTT of the
	// transactions no host delayed by more than hostDelayed.
	client, clean *hdrhistogram.Histogram // ns
	minNet        int64                   // smallest network RTT so far, -1 before the first
	// Transactions a host delayed, the most it added to one, and the
	// host shares of the transaction with the largest network RTT.
	delayedClient, delayedServer    int64
	worstClient, worstServer        int64
	maxNet, maxNetClient, maxNetSrv int64
	fwd, back                       *stats.Signed // raw T2 − T1 and T4 − T3, ns
	// best is the exchange with the smallest network RTT, for the
	// clock offset estimate from the transactions themselves.
	best    stats.OffsetSample
	bestRTT int64
	spacing *result.Spacing
	// index is the point's place in its run, and onSample the
	// prober's OnSample (nil for the warm-up's scratch point).
	index    int
	onSample func(Sample)
}

func newAccumulator(label string, req, resp int) *accumulator {
	return &accumulator{
		label: label, req: req, resp: resp,
		rtt: newHist(rttDigits), network: newHist(rttDigits), server: newHist(otherDigits),
		client: newHist(otherDigits), clean: newHist(rttDigits), minNet: -1, maxNet: -1,
		fwd: stats.NewSigned(), back: stats.NewSigned(), bestRTT: -1,
	}
}

// sample is one completed transaction: the four times (T1 and T4 on the
// client's wall clock, T2 and T3 on the server's) and the RTT from the
// client's monotonic clock; rx is the kernel's receive time of the
// response on the client's wall clock (0: not known), tx the kernel's
// send time of the request on the same clock (0: not known), rxHW and
// txHW the same two on the NIC's clock (0: not known), and sendNs how
// long the client's send took, from just before it to its return.
type sample struct {
	t1, t2, t3, t4 int64
	rx, tx         int64
	rxHW, txHW     int64
	sendNs         int64
	rtt            time.Duration
	done           time.Time
}

// A host delayed a transaction when its own share (the client's send
// plus receive delay, or the server's T3 − T2) exceeded stats.HostDelayed
// of the smallest network RTT seen so far.
func (a *accumulator) hostDelayed() int64 {
	return int64(stats.HostDelayed(time.Duration(a.minNet)))
}

func (a *accumulator) add(s sample) {
	a.completed++
	a.last = s.done
	if a.onSample != nil {
		a.onSample(Sample{Point: a.index, Done: s.done, RTT: s.rtt})
	}
	rtt := int64(s.rtt)
	srv := max(s.t3-s.t2, 0)
	// The client's receive delay is removed from the network RTT: the
	// kernel stamped the response's arrival, the rest is this host's.
	var rxDelay int64
	if s.rx > 0 && s.t4 >= s.rx {
		rxDelay = s.t4 - s.rx
		record(a.client, rxDelay)
	}
	// So is its send share, from T1 to the request's kernel send stamp
	// where there is one, else to the send's return (which the network
	// RTT keeps: the request may have left before it).
	sendShare := max(s.sendNs, 0)
	var txDelay int64
	if s.tx > 0 && s.tx >= s.t1 {
		txDelay = s.tx - s.t1
		sendShare = txDelay
	}
	netRTT := max(rtt-srv-rxDelay-txDelay, 0)
	if s.txHW > 0 && s.rxHW > s.txHW {
		// The NIC stamped both ends on its own clock: the wire's RTT.
		netRTT = max(s.rxHW-s.txHW-srv, 0)
	}
	record(a.rtt, rtt)
	record(a.network, netRTT)
	record(a.server, srv)
	clientShare := rxDelay + sendShare
	limit := a.hostDelayed()
	var clientDelayed, serverDelayed int64 // the shares over the threshold, else 0
	if clientShare > limit {
		a.delayedClient++
		a.worstClient = max(a.worstClient, clientShare)
		clientDelayed = clientShare
	}
	if srv > limit {
		a.delayedServer++
		a.worstServer = max(a.worstServer, srv)
		serverDelayed = srv
	}
	if clientDelayed == 0 && serverDelayed == 0 {
		record(a.clean, netRTT)
	}
	if netRTT > a.maxNet {
		a.maxNet, a.maxNetClient, a.maxNetSrv = netRTT, clientDelayed, serverDelayed
	}
	if a.minNet < 0 || netRTT < a.minNet {
		a.minNet = netRTT
	}
	a.fwd.Record(s.t2 - s.t1 - txDelay)  // from the request's leaving
	a.back.Record(s.t4 - rxDelay - s.t3) // to the response's arrival, not the client's read
	if s.t3 >= s.t2 && (a.bestRTT < 0 || netRTT < a.bestRTT) {
		a.best, a.bestRTT = stats.OffsetSample{T1: s.t1, T2: s.t2, T3: s.t3, T4: s.t4}, netRTT
	}
}

// point reports the accumulator; offsetNs is the server's clock minus
// the client's, applied to the one-way delays when haveOffset.
func (a *accumulator) point(offsetNs int64, haveOffset bool) result.RRPoint {
	p := result.RRPoint{
		Label: a.label, RequestSize: a.req, ResponseSize: a.resp,
		Sent: a.sent, Completed: a.completed, Lost: a.lost, Late: a.late, Errors: a.errors,
		RTT:        stats.Summarize(a.rtt, 1),
		NetworkRTT: stats.Summarize(a.network, 1),
		ServerTime: stats.Summarize(a.server, 1),
		Spacing:    a.spacing,
	}
	if a.client.TotalCount() > 0 {
		c := stats.Summarize(a.client, 1)
		p.ClientTime = &c
	}
	p.HostFlags = a.hostFlags(p.NetworkRTT)
	if !a.first.IsZero() && a.last.After(a.first) {
		p.Seconds = a.last.Sub(a.first).Seconds()
		p.TransactionsPerSecond = float64(a.completed) / p.Seconds
	}
	if a.completed > 0 {
		p.RTTHistogram = HistogramOf(a.rtt, 1, 0)
		p.NetworkRTTHistogram = HistogramOf(a.network, 1, 0)
		if haveOffset {
			p.ForwardOWD = a.fwd.Percentiles(-offsetNs)
			p.BackwardOWD = a.back.Percentiles(offsetNs)
		}
	}
	return p
}

// hostFlags names the hosts whose scheduling is inside the network RTT's
// max and p99 (net as summarised): the max when its own transaction was
// delayed by a host, the p99 when it exceeds the p99 of the transactions
// no host delayed by more than the threshold.
func (a *accumulator) hostFlags(net result.Percentiles) []result.RRHostFlag {
	if a.delayedClient == 0 && a.delayedServer == 0 {
		return nil
	}
	limit := a.hostDelayed()
	var cleanMax, cleanP99 *float64
	if a.clean.TotalCount() > 0 {
		c := stats.Summarize(a.clean, 1)
		cleanMax, cleanP99 = &c.Max, &c.P99
	}
	type host struct {
		role         string
		count, worst int64
		atMax        int64
	}
	hosts := []host{
		{result.RoleClient, a.delayedClient, a.worstClient, a.maxNetClient},
		{result.RoleServer, a.delayedServer, a.worstServer, a.maxNetSrv},
	}
	flag := func(figure string, v float64, without *float64, h host, share int64) result.RRHostFlag {
		return result.RRHostFlag{Figure: figure, Host: h.role, NetworkRTTUs: v, WithoutUs: without,
			Transactions: h.count, ShareUs: float64(share) / 1e3, HostDelayedUs: float64(limit) / 1e3}
	}
	var out []result.RRHostFlag
	for _, h := range hosts {
		if h.atMax > 0 {
			out = append(out, flag("max", net.Max, cleanMax, h, h.atMax))
		}
	}
	if cleanP99 == nil || net.P99-*cleanP99 > float64(limit)/1e3 {
		for _, h := range hosts {
			if h.count > 0 {
				out = append(out, flag("p99", net.P99, cleanP99, h, h.worst))
			}
		}
	}
	return out
}
