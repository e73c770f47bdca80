package flowrun

import (
	"testing"

	"github.com/wireperf/wireperf/internal/tcpinfo"
)

const (
	stateEstablished = 1
	stateCloseWait   = 8
)

func TestDataReceivedLeavesOutThePeersFIN(t *testing.T) {
	info := func(state uint8, n uint64) *tcpinfo.Info {
		return &tcpinfo.Info{State: state, BytesReceived: n}
	}
	for _, c := range []struct {
		name         string
		first, after *tcpinfo.Info
		want         uint64
	}{
		{"open, no FIN", info(stateEstablished, 1000), info(stateEstablished, 1000), 1000},
		{"open, data since", info(stateEstablished, 1000), info(stateEstablished, 5000), 1000},
		{"FIN in the state", info(stateCloseWait, 1001), nil, 1000},
		// The state was read before the FIN, the count after it: the
		// second read shows the FIN with the count unchanged.
		{"FIN between state and count", info(stateEstablished, 1001), info(stateCloseWait, 1001), 1000},
		// The FIN arrived after the first read: the count moved, so the
		// first count holds no FIN.
		{"FIN after the first read", info(stateEstablished, 1000), info(stateCloseWait, 1001), 1000},
		{"data and FIN after the first read", info(stateEstablished, 1000), info(stateCloseWait, 3001), 1000},
		{"second read failed", info(stateEstablished, 1000), nil, 1000},
	} {
		if got := dataReceived(c.first, c.after); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
