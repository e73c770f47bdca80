package emit

import (
	"math"

	"github.com/wireperf/wireperf/internal/result"
)

// endObject is iperf3's end object. Unlike iperf3, which knows the peer's
// figures only from its summary, both ends' streams are complete here, so
// the sender's TCP figures are filled even in reverse mode.
func endObject(r *result.Result) iperfEnd {
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
		},
	}
	for _, f := range r.Flows() {
		e.Streams = append(e.Streams, v.endStream(f))
	}
	e.SumSent, e.SumReceived = endSums(result.Direction{SenderRole: v.primary}, v)
	for _, d := range r.Directions() {
		if d.SenderRole == v.primary {
			e.SumSent, e.SumReceived = endSums(d, v)
			e.SenderTCPCongestion, e.ReceiverTCPCongestion = congestion(r, d)
			continue
		}
		sent, received := endSums(d, v)
		e.SumSentBidirReverse, e.SumReceivedBidirReverse = &sent, &received
	}
	return e
}

func (v view) endStream(f result.Flow) iperfEndStream {
	localSends := senderRoleOf(f.SenderRole) == v.local
	var es iperfEndStream
	es.Sender = iperfEndSender{Socket: f.ID, Sender: localSends}
	if s := f.Sent; s != nil {
		es.Sender.Start, es.Sender.End, es.Sender.Seconds = finite(s.Start), finite(s.End), finite(s.Seconds())
		es.Sender.Bytes = s.Bytes
		es.Sender.BitsPerSecond = finite(result.Rate(s.Bytes, s.Seconds()))
		es.Sender.Retransmits = s.Retransmits
		es.Sender.MaxSndCwnd, es.Sender.MaxSndWnd = s.MaxCwnd, s.MaxSndWnd
		es.Sender.MaxRTT, es.Sender.MinRTT, es.Sender.MeanRTT = s.MaxRTTus, s.MinRTTus, s.MeanRTTus
	}
	es.Receiver = iperfEndReceiver{Socket: f.ID, Sender: localSends}
	if s := f.Received; s != nil {
		es.Receiver.Start, es.Receiver.End, es.Receiver.Seconds = finite(s.Start), finite(s.End), finite(s.Seconds())
		es.Receiver.Bytes = s.Bytes
		es.Receiver.BitsPerSecond = finite(result.Rate(s.Bytes, s.Seconds()))
	}
	return es
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
