package emit

import (
	"bytes"

	"github.com/wireperf/wireperf/internal/result"
)

// ServerOutput renders a server's record of a test for an iperf3 client's
// --get-server-output: iperf3 JSON, or our text when asText is set (an
// iperf3 server without -J sends text).
func ServerOutput(asText bool) func(*result.Result) ([]byte, bool) {
	return func(r *result.Result) ([]byte, bool) {
		var b bytes.Buffer
		if asText {
			if Replay(&Text{W: &b, ServerSide: true}, r) != nil {
				return nil, false
			}
			return b.Bytes(), false
		}
		if (&JSON{W: &b}).Write(r) != nil {
			return nil, true
		}
		return b.Bytes(), true
	}
}
