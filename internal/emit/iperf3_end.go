package emit

import (
	"math"

	"github.com/wireperf/wireperf/internal/result"
)

// afterOmit is a time since the test's start on iperf3's clock, which
// starts again when the omitted start ends: -t 2 -O 1 reports 0 to 2 s.
func afterOmit(r *result.Result, t float64) float64 {
	return max(t-r.Spec.Omit.Seconds(), 0)
}

// omitClock is r with its stream totals' times on iperf3's clock
// (afterOmit); r itself when nothing was omitted.
func omitClock(r *result.Result) *result.Result {
	if r.Spec.Omit <= 0 {
		return r
	}
	c := *r
	for _, e := range []*result.End{&c.Local, &c.Remote} {
		e.Streams = append([]result.Stream(nil), e.Streams...)
		for i := range e.Streams {
			s := &e.Streams[i]
			s.Start, s.End = afterOmit(r, s.Start), afterOmit(r, s.End)
		}
	}
	return &c
}

// endObject is iperf3's end object. Unlike iperf3, which knows the peer's
// figures only from its summary, both ends' streams are complete here, so
// the sender's TCP figures are filled even in reverse mode.
func endObject(r *result.Result) iperfEnd {
	r = omitClock(r)
	v := viewOf(r)
	e := iperfEnd{
		Streams: []iperfEndStream{},
		CPU: iperfCPU{
			HostTotal:    finite(r.Local.CPU.TotalPercent),
			HostUser:     finite(r.Local.CPU.UserPercent),
			HostSystem:   finite(r.Local.CPU.SystemPercent),
			RemoteTotal:  finite(r.Remote.CPU.TotalPercent),
			RemoteUser:   finite(r.Remote.CPU.UserPercent),
			RemoteSystem: finite(r.Remote.CPU.SystemPercent),
			// One process ran both ends of a selftest: its memory is
			// neither end's.
			HostPeakRSSBytes:   ifNot(r.Local.OneProcess, r.Local.CPU.PeakRSSBytes),
			RemotePeakRSSBytes: ifNot(r.Remote.OneProcess, r.Remote.CPU.PeakRSSBytes),
		},
	}
	if v.udp {
		return udpEndObject(r, v, e)
	}
	for _, f := range r.Flows() {
		e.Streams = append(e.Streams, v.endStream(f))
	}
	e.SumSent, e.SumReceived = endSums(result.Direction{SenderRole: v.primary}, v)
	e.SenderTCPCongestion, e.ReceiverTCPCongestion = new(string), new(string)
	for _, d := range r.Directions() {
		if d.SenderRole == v.primary {
			e.SumSent, e.SumReceived = endSums(d, v)
			sender, receiver := congestion(r, d)
			e.SenderTCPCongestion, e.ReceiverTCPCongestion = &sender, &receiver
			continue
		}
		sent, received := endSums(d, v)
		e.SumSentBidirReverse, e.SumReceivedBidirReverse = &sent, &received
	}
	return e
}

// udpEndObject fills e, which has the CPU figures, for a UDP test: a
// "udp" object per stream and, per direction, iperf3's UDP sums.
func udpEndObject(r *result.Result, v view, e iperfEnd) iperfEnd {
	for _, f := range r.Flows() {
		e.Streams = append(e.Streams, v.endUDPStream(f))
	}
	sum, sent, received := udpEndSums(result.Direction{SenderRole: v.primary}, v)
	e.Sum, e.SumSent, e.SumReceived = &sum, sent, received
	for _, d := range r.Directions() {
		sum, sent, received := udpEndSums(d, v)
		if d.SenderRole == v.primary {
			e.Sum, e.SumSent, e.SumReceived = &sum, sent, received
			continue
		}
		e.SumBidirReverse, e.SumSentBidirReverse, e.SumReceivedBidirReverse = &sum, &sent, &received
	}
	return e
}

func (v view) endStream(f result.Flow) iperfEndStream {
	localSends := senderRoleOf(f.SenderRole) == v.local
	var es iperfEndStream
	es.Sender = &iperfEndSender{Socket: f.ID, Sender: localSends}
	if s := f.Sent; s != nil {
		es.Sender.Start, es.Sender.End, es.Sender.Seconds = finite(s.Start), finite(s.End), finite(s.Seconds())
		es.Sender.Bytes = s.Bytes
		es.Sender.BitsPerSecond = finite(result.Rate(s.Bytes, s.Seconds()))
		es.Sender.Retransmits = s.Retransmits
		es.Sender.MaxSndCwnd, es.Sender.MaxSndWnd = s.MaxCwnd, s.MaxSndWnd
		es.Sender.MaxRTT, es.Sender.MinRTT, es.Sender.MeanRTT = s.MaxRTTus, s.MinRTTus, s.MeanRTTus
	}
	es.Receiver = &iperfEndReceiver{Socket: f.ID, Sender: localSends}
	if s := f.Received; s != nil {
		es.Receiver.Start, es.Receiver.End, es.Receiver.Seconds = finite(s.Start), finite(s.End), finite(s.Seconds())
		es.Receiver.Bytes = s.Bytes
		es.Receiver.BitsPerSecond = finite(result.Rate(s.Bytes, s.Seconds()))
	}
	return es
}

// endUDPStream is one UDP stream's totals from the local end's view, with
// the receiver's jitter and loss whichever end received, as iperf3 has
// them (it learns the peer's figures at the end of the test).
func (v view) endUDPStream(f result.Flow) iperfEndStream {
	localSends := senderRoleOf(f.SenderRole) == v.local
	local := f.Received
	if localSends {
		local = f.Sent
	}
	sent, received := streamUDP(f.Sent), streamUDP(f.Received)
	u := &iperfEndUDP{Socket: f.ID, Sender: localSends}
	if local != nil {
		u.Start, u.End, u.Seconds = finite(local.Start), finite(local.End), finite(local.Seconds())
		u.Bytes = local.Bytes
		u.BitsPerSecond = finite(result.Rate(local.Bytes, local.Seconds()))
	}
	figures := udpFigures(false, received)
	u.JitterMs, u.LostPackets, u.LostPercent = *figures.JitterMs, *figures.LostPackets, *figures.LostPercent
	u.Packets = figures.Packets
	if localSends {
		u.Packets = udpFigures(true, sent).Packets
	}
	if received != nil {
		u.OutOfOrder = received.Reordered
		u.udpReceiveExtras = receiveExtras(received)
		u.udpReceiveExtras.OutOfOrder = nil // iperf3's own key above
	}
	if sent != nil {
		u.udpSendExtras = &udpSendExtras{SendErrors: sent.SendErrors}
	}
	if s := f.Sent; s != nil {
		u.peerFigures.setSender(s.Bytes, result.Span{Start: s.Start, End: s.End})
	}
	if s := f.Received; s != nil {
		u.peerFigures.setReceiver(s.Bytes, result.Span{Start: s.Start, End: s.End})
	}
	return iperfEndStream{UDP: u}
}

// receiveExtras are wireperf's receiver figures of u.
func receiveExtras(u *result.UDP) *udpReceiveExtras {
	reordered := u.Reordered
	return &udpReceiveExtras{
		OutOfOrder:       &reordered,
		ReceivedPackets:  u.Received,
		Duplicates:       u.Duplicates,
		LatePackets:      u.Late,
		ReorderMaxExtent: u.ReorderMaxExtent,
		JitterSamples:    u.JitterSamples,
		JitterMethod:     u.JitterMethod,
	}
}

// udpEndSums renders a UDP direction's totals as iperf3 3.12 does: "sum"
// is the local end's view (its own bytes and packets, the receiver's
// jitter and loss); sum_sent has the sender's bytes and packets and, as
// the sender measures neither, 0 for jitter and loss; sum_received has
// the receiver's figures and wireperf's: out_of_order, duplicates and
// the rest. Unlike TCP's, iperf3's UDP sum_sent is always "sender": true
// and sum_received "sender": false, whichever end writes them.
func udpEndSums(d result.Direction, v view) (sum, sent, received iperfEndSum) {
	localSends := d.SenderRole == v.local
	sent, received = endSums(d, v)
	sent.Retransmits = nil
	sent.Sender, received.Sender = true, false
	sentUDP, receivedUDP := directionUDP(d)
	var zero float64
	var none int64
	sent.iperfUDPFigures = udpFigures(true, sentUDP)
	sent.iperfUDPFigures.JitterMs, sent.iperfUDPFigures.LostPackets, sent.iperfUDPFigures.LostPercent = &zero, &none, &zero
	sent.udpSendExtras = &udpSendExtras{}
	if sentUDP != nil {
		sent.udpSendExtras.SendErrors = sentUDP.SendErrors
	}
	received.iperfUDPFigures = udpFigures(false, receivedUDP)
	if receivedUDP == nil {
		receivedUDP = &result.UDP{}
	}
	received.udpReceiveExtras = receiveExtras(receivedUDP)

	if localSends {
		sum = sent
		sum.udpSendExtras = nil
		figures := *received.iperfUDPFigures
		figures.Packets = sent.iperfUDPFigures.Packets
		sum.iperfUDPFigures = &figures
	} else {
		sum = received
		sum.udpReceiveExtras = nil
	}
	sum.Sender = localSends
	return sum, sent, received
}

// endSums renders a direction's totals as sum_sent and sum_received.
func endSums(d result.Direction, v view) (sent, received iperfEndSum) {
	localSends := d.SenderRole == v.local
	sum := func(s result.Sum) iperfEndSum {
		return iperfEndSum{
			Start:         finite(s.Start),
			End:           finite(s.End),
			Seconds:       finite(s.Seconds),
			Bytes:         s.Bytes,
			BitsPerSecond: finite(s.BitsPerSecond()),
			Sender:        localSends,
		}
	}
	sent, received = sum(d.Sent), sum(d.Received)
	retransmits := d.Sent.Retransmits
	sent.Retransmits = &retransmits
	return sent, received
}

// congestion names each side's congestion control for a direction: the
// socket's, else its host's default.
func congestion(r *result.Result, d result.Direction) (sender, receiver string) {
	hostDefault := func(role string) string {
		for _, e := range []*result.End{&r.Local, &r.Remote} {
			if e.Role == role && e.Limits != nil {
				return e.Limits.Congestion
			}
		}
		return ""
	}
	sender, receiver = hostDefault(d.SenderRole), hostDefault(otherRole(d.SenderRole))
	for _, f := range d.Flows {
		if f.Sent != nil && f.Sent.Socket.Congestion != "" {
			sender = f.Sent.Socket.Congestion
		}
		if f.Received != nil && f.Received.Socket.Congestion != "" {
			receiver = f.Received.Socket.Congestion
		}
		break // the first flow speaks for all, as in iperf3
	}
	return sender, receiver
}

// finite turns NaN and infinities, which JSON cannot carry, into 0, so a
// broken sample cannot lose a whole report.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// ifNot is v unless skip.
func ifNot(skip bool, v int64) int64 {
	if skip {
		return 0
	}
	return v
}
