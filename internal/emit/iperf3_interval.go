package emit

import (
	"github.com/wireperf/wireperf/internal/result"
)

// view fixes how a Result maps onto iperf3's one-sided layout.
type view struct {
	udp   bool
	local string // role of the end whose view the document gives
	// primary is the sender role of iperf3's "sum" and "sum_sent": the
	// client unless the test is reversed. With --bidir, the server's
	// direction goes in the *_bidir_reverse objects.
	primary string
}

func viewOf(r *result.Result) view {
	v := view{udp: isUDP(r.Spec), local: r.Local.Role, primary: result.RoleClient}
	if v.local == "" {
		v.local = result.RoleClient
	}
	if r.Spec.Reverse && !r.Spec.Bidir {
		v.primary = result.RoleServer
	}
	return v
}

// intervalObject is one iperf3 intervals[] entry.
func intervalObject(r *result.Result, row result.IntervalRow) iperfInterval {
	v := viewOf(r)
	if !row.Omitted { // iperf3's clock restarts after the omitted start
		row.Start, row.End = afterOmit(r, row.Start), afterOmit(r, row.End)
		for i := range row.Flows {
			f := &row.Flows[i]
			f.SentSpan.Start, f.SentSpan.End = afterOmit(r, f.SentSpan.Start), afterOmit(r, f.SentSpan.End)
			f.ReceivedSpan.Start, f.ReceivedSpan.End = afterOmit(r, f.ReceivedSpan.Start), afterOmit(r, f.ReceivedSpan.End)
		}
	}
	iv := iperfInterval{Streams: []iperfIntervalStream{}, Tail: row.Tail}
	for _, f := range row.Flows {
		iv.Streams = append(iv.Streams, v.intervalStream(row, f))
	}
	iv.Sum = v.intervalSum(row, v.primary)
	other := otherRole(v.primary)
	for _, f := range row.Flows {
		if senderRoleOf(f.SenderRole) == other {
			sum := v.intervalSum(row, other)
			iv.SumBidirReverse = &sum
			break
		}
	}
	return iv
}

func (v view) intervalStream(row result.IntervalRow, f result.FlowInterval) iperfIntervalStream {
	secs := row.End - row.Start
	localSends := senderRoleOf(f.SenderRole) == v.local
	local := f.Received
	if localSends {
		local = f.Sent
	}
	s := iperfIntervalStream{
		Socket:  f.ID,
		Start:   finite(row.Start),
		End:     finite(row.End),
		Seconds: finite(secs),
		Omitted: row.Omitted,
		Sender:  localSends,
	}
	if local != nil {
		s.Bytes = local.Bytes
		s.BitsPerSecond = finite(result.Rate(local.Bytes, secs))
		if localSends && local.HasTCPInfo {
			s.iperfTCPSample = &iperfTCPSample{
				Retransmits: local.Retransmits,
				SndCwnd:     local.CwndBytes,
				SndWnd:      local.SndWnd,
				RTT:         local.RTTus,
				RTTVar:      local.RTTVarus,
				PMTU:        local.PMTU,
			}
		}
	}
	if f.Sent != nil {
		s.peerFigures.setSender(f.Sent.Bytes, f.SentSpan)
		if f.Sent.HasDelivered {
			d := f.Sent.Delivered
			s.peerFigures.SenderBytesDelivered = &d
		}
	}
	if f.Received != nil {
		s.peerFigures.setReceiver(f.Received.Bytes, f.ReceivedSpan)
		if f.Received.KernelCounted {
			app, backlog := f.Received.AppBytes, f.Received.Backlog
			s.peerFigures.ReceiverAppBytes, s.peerFigures.ReceiverBacklog = &app, &backlog
		}
	}
	if v.udp {
		s.iperfUDPFigures = udpFigures(localSends, udpOf(local))
		s.peerFigures.SenderUDP, s.peerFigures.ReceiverUDP = senderPart(safeUDP(udpOf(f.Sent))), safeUDP(udpOf(f.Received))
	}
	return s
}

// intervalSum adds the flows sent by role, each from the local end's view.
func (v view) intervalSum(row result.IntervalRow, role string) iperfIntervalSum {
	secs := row.End - row.Start
	localSends := role == v.local
	sum := iperfIntervalSum{
		Start:   finite(row.Start),
		End:     finite(row.End),
		Seconds: finite(secs),
		Omitted: row.Omitted,
		Sender:  localSends,
	}
	t := sumRow(row, role)
	if localSends {
		sum.Bytes = t.sent
		if t.hasTCPInfo {
			sum.Retransmits = &t.retransmits
		}
	} else {
		sum.Bytes = t.received
	}
	sum.BitsPerSecond = finite(result.Rate(sum.Bytes, secs))
	if t.hasSent {
		sum.peerFigures.setSender(t.sent, t.sentSpan)
		if t.hasDelivered {
			d := t.delivered
			sum.peerFigures.SenderBytesDelivered = &d
		}
	}
	if t.hasReceived {
		sum.peerFigures.setReceiver(t.received, t.receivedSpan)
	}
	if v.udp {
		sent, received := rowUDP(row, role)
		local := received
		if localSends {
			local = sent
		}
		sum.iperfUDPFigures = udpFigures(localSends, local)
		sum.peerFigures.SenderUDP, sum.peerFigures.ReceiverUDP = senderPart(safeUDP(sent)), safeUDP(received)
	}
	return sum
}

// udpFigures are iperf3's UDP keys of an interval stream or sum from one
// end's view: the datagrams sent on the sending end; on the receiving end
// the datagrams expected, with jitter and loss. Missing figures count 0,
// so the keys are there whatever the ends reported.
func udpFigures(localSends bool, u *result.UDP) *iperfUDPFigures {
	if u == nil {
		u = &result.UDP{}
	}
	if localSends {
		return &iperfUDPFigures{Packets: u.Sent}
	}
	jitter, lost, percent := finite(u.JitterMs), u.Lost, finite(u.LostPercent())
	if u.JitterSamples == 0 {
		jitter = 0 // unknown; jitter_samples says so where it is written
	}
	return &iperfUDPFigures{JitterMs: &jitter, LostPackets: &lost, Packets: u.Expected, LostPercent: &percent}
}

// setSender sets the sender's figures, its rate over its own span.
func (p *peerFigures) setSender(bytes int64, span result.Span) {
	rate := finite(result.Rate(bytes, span.Seconds()))
	start, end := finite(span.Start), finite(span.End)
	p.SenderBytes, p.SenderBitsPerSecond, p.SenderStart, p.SenderEnd = &bytes, &rate, &start, &end
}

// setReceiver sets the receiver's figures, its rate over its own span.
func (p *peerFigures) setReceiver(bytes int64, span result.Span) {
	rate := finite(result.Rate(bytes, span.Seconds()))
	start, end := finite(span.Start), finite(span.End)
	p.ReceiverBytes, p.ReceiverBitsPerSecond, p.ReceiverStart, p.ReceiverEnd = &bytes, &rate, &start, &end
}
