package iperf3

import (
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
)

// peerHost describes an iperf3 peer; version is its client_version when
// it told us one.
func peerHost(version string) result.Host {
	if version == "" {
		return result.Host{Version: "iperf3"}
	}
	return result.Host{Version: "iperf " + version}
}

// remoteEnd is the peer's End as its results describe it. local are our
// streams; the peer's stream of the same ID has the opposite role.
func remoteEnd(role string, host result.Host, r Results, s spec.Spec, local []result.Stream) result.End {
	e := result.End{
		Role: role, Host: host,
		CPU: result.CPU{UserPercent: float64(r.CPUUser), SystemPercent: float64(r.CPUSystem), TotalPercent: float64(r.CPUTotal)},
	}
	byID := map[int]result.Stream{}
	for _, st := range local {
		byID[st.ID] = st
	}
	for _, sr := range r.Streams {
		id := localStreamID(int(sr.ID))
		mine, ok := byID[id]
		if !ok {
			continue
		}
		st := result.Stream{
			ID: id, Sender: !mine.Sender, LocalAddr: mine.RemoteAddr, RemoteAddr: mine.LocalAddr,
			Start: s.Omit.Seconds(), End: s.Omit.Seconds() + float64(sr.EndTime),
			Bytes: int64(sr.Bytes),
		}
		st.Socket.Congestion = r.CongestionUsed
		if st.Sender && sr.Retransmits > 0 {
			st.Retransmits = int64(sr.Retransmits)
		}
		if s.Protocol == spec.UDP {
			var u result.UDP
			if st.Sender {
				u.Sent = int64(sr.Packets - sr.OmittedPackets)
			} else {
				u.Expected = int64(max(sr.Packets-sr.OmittedPackets, 0))
				u.Lost = int64(max(sr.Errors-sr.OmittedErrors, 0))
				u.Received = max(u.Expected-u.Lost, 0)
				// iperf3 smooths its jitter over every pair of datagrams it
				// received, the omitted start included, on its user-space clock.
				u.JitterMs = float64(sr.Jitter) * 1000
				u.JitterSamples = max(int64(sr.Packets-sr.Errors)-1, 0)
				u.JitterMethod = "iperf3's user-space clock"
				u.TimestampSource = "user-space"
			}
			st.UDP = &u
		}
		e.Streams = append(e.Streams, st)
	}
	return e
}
