package iperf3

import (
	"github.com/wireperf/wireperf/internal/result"
)

// Observer sees a client's test as it runs; its shape is
// session.Observer's, so the CLI's observer serves both. The remote end
// of an iperf3 test reports only at the end, so interval rows carry the
// local end's figures only.
type Observer interface {
	Started(r *result.Result)
	Interval(r *result.Result, row result.IntervalRow)
}

// peerHost describes an iperf3 peer; version is its client_version when
// it told us one.
func peerHost(version string) result.Host {
	if version == "" {
		return result.Host{Version: "iperf3"}
	}
	return result.Host{Version: "iperf " + version}
}
