package emit

import (
	"fmt"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// bufferNote explains why a granted buffer differs from the request
// (docs/metrics.md, "Linux socket buffers").
const bufferNote = "Linux doubles a requested socket buffer for its own bookkeeping and caps it at net.core.rmem_max/wmem_max; setting -w turns off autotuning."

// streamSocket is one data socket of one end.
type streamSocket struct {
	id   int
	sock result.Socket
}

// writeBufferLines writes what each end asked of its socket buffers and
// what it got: one line per end, or per stream where streams differ.
func writeBufferLines(l *textLines, h Header) {
	client, server := headerSockets(h)
	what := "TCP window size" // as iperf3 names the socket buffers
	if isUDP(h.Spec) {
		what = "UDP buffer size"
	}
	// Without -w a request is wireperf's own (a UDP socket's default
	// size): no warning, and no word of -w, which the user did not give.
	byUser := h.Spec.Window > 0
	requested := false
	for _, end := range []struct {
		name  string
		socks []streamSocket
	}{{"Client", client}, {"Server", server}} {
		if len(end.socks) == 0 {
			continue
		}
		udp := isUDP(h.Spec)
		if sameBuffers(end.socks) {
			l.add("%s %s: %s", end.name, what, describeBuffers(end.socks[0].sock, udp, byUser))
		} else {
			for _, s := range end.socks {
				l.add("%s %s %s: %s", flowTag(s.id, "", false), end.name, what, describeBuffers(s.sock, udp, byUser))
			}
		}
		for _, s := range end.socks {
			requested = requested || s.sock.SndBufRequested > 0 || s.sock.RcvBufRequested > 0
		}
	}
	if requested && byUser {
		l.add("%s", bufferNote)
	}
}

// headerSockets gathers each end's data sockets: from the streams, or else
// from the Ends. A socket with nothing filled in is left out.
func headerSockets(h Header) (client, server []streamSocket) {
	add := func(dst []streamSocket, id int, s result.Socket) []streamSocket {
		if s == (result.Socket{}) {
			return dst
		}
		return append(dst, streamSocket{id, s})
	}
	for _, s := range h.Streams {
		client = add(client, s.ID, s.Socket)
		if s.RemoteSocket != nil {
			server = add(server, s.ID, *s.RemoteSocket)
		}
	}
	for _, e := range []result.End{h.Local, h.Remote} {
		dst := &client
		if e.Role == result.RoleServer {
			dst = &server
		}
		if len(*dst) > 0 {
			continue
		}
		for _, s := range e.Streams {
			*dst = add(*dst, s.ID, s.Socket)
		}
	}
	return client, server
}

// sameBuffers reports whether all sockets asked for and got the same buffers.
func sameBuffers(socks []streamSocket) bool {
	first := socks[0].sock
	for _, s := range socks[1:] {
		if s.sock.SndBufRequested != first.SndBufRequested || s.sock.SndBufGranted != first.SndBufGranted ||
			s.sock.RcvBufRequested != first.RcvBufRequested || s.sock.RcvBufGranted != first.RcvBufGranted ||
			s.sock.SndBufCap != first.SndBufCap || s.sock.RcvBufCap != first.RcvBufCap {
			return false
		}
	}
	return true
}

// describeBuffers renders both buffers of a socket, e.g.
// "send 4.00 MBytes (WARNING: requested 2.00 MBytes), receive ...".
// byUser says the requests are the user's (-w); otherwise they are
// wireperf's own and read as such, without a warning.
func describeBuffers(s result.Socket, udp, byUser bool) string {
	return "send " + describeBuffer(s.SndBufRequested, s.SndBufGranted, s.SndBufCap, "wmem_max", udp, byUser) +
		", receive " + describeBuffer(s.RcvBufRequested, s.RcvBufGranted, s.RcvBufCap, "rmem_max", udp, byUser)
}

// describeBuffer shows a buffer in the unit that reads best, the same for
// every figure of the line, so that a requested and an autotuned buffer
// compare at a glance (the kernel's doubling shows as twice the figure).
// A request above net.core's limit says the limit capped it: the socket
// got what a request of the limit gets. Linux autotunes TCP's buffers,
// not UDP's: a UDP socket that asked for nothing has the default.
func describeBuffer(requested, granted, capped int64, limit string, udp, byUser bool) string {
	size := func(n int64) string { return strings.TrimSpace(units.FormatTransfer(float64(n), units.AdaptiveBytes)) }
	untouched := " (autotuned)"
	if udp {
		untouched = " (default)"
	}
	switch {
	case requested == 0 && granted == 0:
		return "unknown" + untouched
	case requested == 0:
		return size(granted) + untouched
	case granted == 0:
		return fmt.Sprintf("unknown (requested %s)", size(requested))
	case !byUser && capped > 0:
		return fmt.Sprintf("%s (wireperf's default request of %s, capped by net.core.%s at %s)",
			size(granted), size(requested), limit, size(capped))
	case !byUser:
		return size(granted)
	case capped > 0:
		return fmt.Sprintf("%s (WARNING: requested %s, capped by net.core.%s at %s: the same as asking for %s)",
			size(granted), size(requested), limit, size(capped), size(capped))
	case granted != requested:
		return fmt.Sprintf("%s (WARNING: requested %s)", size(granted), size(requested))
	default:
		return size(granted)
	}
}
