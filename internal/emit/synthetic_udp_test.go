package emit

import (
	"fmt"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// Synthetic UDP results: both ends filled in as the UDP engine fills
// them, with figures chosen so that flows, sums and sides are told apart.

const udpLength = 1448

// udpFlowDef is one UDP flow of a synthetic test. The slices give each
// interval's figures; a missing entry counts 0.
type udpFlowDef struct {
	id         int
	senderRole string
	perSecond  int64   // datagrams sent in the first interval
	lost       []int64 // per interval; late ones included
	late       []int64
	duplicates []int64
	reordered  []int64
	extent     []int64
	jitterMs   float64 // 0 with noJitter: unknown
	noJitter   bool    // no datagram pairs to compare: JitterSamples 0
	method     string  // JitterMethod; "" for the default "kernel timestamps"
	groBatches int64
	sendErrors int64 // over the test, all in the last interval
}

func (f udpFlowDef) at(v []int64, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// udpSentIn is the datagrams flow f sent in interval i.
func udpSentIn(f udpFlowDef, i int) int64 { return f.perSecond + int64(i)*11 }

func udpSpec() spec.Spec {
	s := spec.Default()
	s.Protocol = spec.UDP
	s.Length = udpLength
	s.Rate = 10e6
	return s
}

// udpForwardResult is one flow client→server without loss.
func udpForwardResult() *result.Result {
	return buildUDPResult(udpSpec(), []udpFlowDef{{id: 1, senderRole: result.RoleClient, perSecond: 863, jitterMs: 0.0123}})
}

// udpReverseResult is one flow server→client losing a few datagrams in
// the network.
func udpReverseResult() *result.Result {
	s := udpSpec()
	s.Reverse = true
	return buildUDPResult(s, []udpFlowDef{{id: 1, senderRole: result.RoleServer, perSecond: 863, lost: []int64{0, 7, 3}, jitterMs: 0.0456}})
}

// udpParallelResult is -P 2 client→server with loss, re-ordering and
// duplicates; the server's socket buffer dropped some of the loss.
func udpParallelResult() *result.Result {
	s := udpSpec()
	s.Streams = 2
	r := buildUDPResult(s, []udpFlowDef{
		{id: 1, senderRole: result.RoleClient, perSecond: 4000, lost: []int64{0, 40, 3000}, late: []int64{0, 1},
			duplicates: []int64{0, 2}, reordered: []int64{0, 12, 5}, extent: []int64{0, 3, 7}, jitterMs: 0.25, sendErrors: 4},
		{id: 2, senderRole: result.RoleClient, perSecond: 2500, lost: []int64{10, 0, 1950}, reordered: []int64{1},
			extent: []int64{1}, jitterMs: 0.75},
	})
	r.Remote.UDPCounters = &result.SNMP{InDatagrams: 12000, RcvbufErrors: 3000, InErrors: 3000}
	r.Local.UDPCounters = &result.SNMP{OutDatagrams: 13000, SndbufErrors: 10} // 4 refused and sent again, 6 dropped
	return r
}

// udpBidirResult is --bidir, one flow each way: client→server loses in
// the server's socket buffer, server→client in the network, and the
// server→client receiver has no jitter (JitterSamples 0).
func udpBidirResult() *result.Result {
	s := udpSpec()
	s.Bidir = true
	r := buildUDPResult(s, []udpFlowDef{
		{id: 1, senderRole: result.RoleClient, perSecond: 900, lost: []int64{0, 100, 20}, jitterMs: 0.111},
		{id: 2, senderRole: result.RoleServer, perSecond: 400, lost: []int64{5}, noJitter: true},
	})
	r.Remote.UDPCounters = &result.SNMP{RcvbufErrors: 120, InErrors: 120} // the server received flow 1
	r.Local.UDPCounters = &result.SNMP{}                                  // the client received flow 2
	return r
}

// udpGROResult is one flow whose receiver took its times per GRO batch
// and whose ends compared clocks.
func udpGROResult() *result.Result {
	r := buildUDPResult(udpSpec(), []udpFlowDef{{id: 1, senderRole: result.RoleClient, perSecond: 5000, jitterMs: 0.0042,
		method: "kernel timestamps per GRO batch", groBatches: 412}})
	u := r.Remote.Streams[0].UDP
	abs := result.Percentiles{Count: u.Received, Min: 50, Mean: 61, P50: 60, P90: 70, P99: 90, P999: 120, Max: 150}
	u.OWD = &result.OWD{Relative: *u.PDV, Absolute: true, AbsoluteUs: &abs, OffsetUs: -1234.5, ErrorBoundUs: 45}
	return r
}

func buildUDPResult(s spec.Spec, flows []udpFlowDef) *result.Result {
	r := buildResult(s, nil) // ends and intervals, no streams yet
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		e.UDPCounters = &result.SNMP{}
		for _, f := range flows {
			e.Streams = append(e.Streams, buildUDPStream(s, f, e))
		}
	}
	return r
}

// buildUDPStream fills one end's stream of flow f, and its intervals.
func buildUDPStream(s spec.Spec, f udpFlowDef, e *result.End) result.Stream {
	sends := e.Role == f.senderRole
	clientAddr := fmt.Sprintf("127.0.0.1:%d", 40000+f.id)
	serverAddr := fmt.Sprintf("%s:%d", serverHost, serverPort)
	st := result.Stream{ID: f.id, Sender: sends, LocalAddr: clientAddr, RemoteAddr: serverAddr, End: endDuration(e.Role),
		Socket: result.Socket{SndBufGranted: 212992, RcvBufGranted: 212992}}
	if e.Role == result.RoleServer {
		st.LocalAddr, st.RemoteAddr = serverAddr, clientAddr
	}
	total := &result.UDP{}
	var jitterSum float64
	for i := range e.Intervals {
		sent := udpSentIn(f, i)
		si := result.StreamInterval{ID: f.id, Sender: sends}
		if sends {
			u := &result.UDP{Sent: sent}
			if i == len(e.Intervals)-1 {
				u.SendErrors = f.sendErrors
			}
			si.UDP, si.Bytes = u, sent*udpLength
			total.Sent += u.Sent
			total.SendErrors += u.SendErrors
		} else {
			lost := f.at(f.lost, i)
			u := &result.UDP{
				Received: sent - lost, Lost: lost, Late: f.at(f.late, i), Duplicates: f.at(f.duplicates, i),
				Reordered: f.at(f.reordered, i), ReorderMaxExtent: f.at(f.extent, i), Expected: sent,
				JitterMethod: f.method, TimestampSource: "kernel", GROBatches: f.groBatches / int64(len(e.Intervals)),
			}
			if !f.noJitter {
				u.JitterMs = f.jitterMs * float64(i+1)
				u.JitterSamples = u.Received - 1
				jitterSum += u.JitterMs
			}
			si.UDP, si.Bytes = u, u.Received*udpLength
			total.Received += u.Received
			total.Lost += u.Lost
			total.Late += u.Late
			total.Duplicates += u.Duplicates
			total.Reordered += u.Reordered
			total.ReorderMaxExtent = max(total.ReorderMaxExtent, u.ReorderMaxExtent)
			total.Expected += u.Expected
			total.JitterSamples += u.JitterSamples
			total.GROBatches += u.GROBatches
		}
		e.Intervals[i].Streams = append(e.Intervals[i].Streams, si)
		st.Bytes += si.Bytes
	}
	if sends {
		target := time.Second / time.Duration(f.perSecond)
		total.Spacing = &result.Spacing{TargetNs: int64(target), MeanNs: float64(target) + 200, ErrP50Ns: 800, ErrP99Ns: 4100, ErrMaxNs: 9000, Samples: total.Sent}
	} else {
		total.JitterMethod, total.TimestampSource = f.method, "kernel"
		if !f.noJitter {
			total.JitterMs = jitterSum / float64(len(e.Intervals))
		}
		total.IPDV = &result.Percentiles{Count: total.Received - 1, Min: -40, Mean: 0.1, P50: 0.2, P90: 3.2, P99: 12, P999: 40, Max: 80}
		total.PDV = &result.Percentiles{Count: total.Received, Min: 0, Mean: 9, P50: 8, P90: 20, P99: 35.5, P999: 60, Max: 1500}
		total.OWD = &result.OWD{Relative: *total.PDV}
	}
	st.UDP = total
	return st
}
