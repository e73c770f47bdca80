package emit

import (
	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// extension is the top-level "wireperf" object of the JSON document:
// the whole Result as wireperf keeps it, and per flow what iperf3's
// layout has no room for.
type extension struct {
	Result *result.Result `json:"result"`
	Flows  []extFlow      `json:"flows"`
	// UDPLoss says, per direction of a UDP test, where the lost
	// datagrams were dropped.
	UDPLoss []extUDPLoss `json:"udp_loss,omitempty"`
	// TCP is, per direction of a TCP test, the senders' TCP internals:
	// the limited-time breakdown, the RFC 6349 figures and slow start.
	// Each stream's TCP_INFO timeline is in the result, under
	// streams[].tcp_timeline of the sending end.
	TCP []*figures.DirectionFigures `json:"tcp,omitempty"`
}

// extUDPLoss is figures.UDPLoss for one direction.
type extUDPLoss struct {
	Direction        string `json:"direction"`
	SenderRole       string `json:"sender_role"`
	Lost             int64  `json:"lost"`
	ReceiverRcvbuf   uint64 `json:"receiver_rcvbuf_errors"`
	ReceiverInErrors uint64 `json:"receiver_in_errors"`
	SenderSndbuf     uint64 `json:"sender_sndbuf_errors"`
	SendErrors       int64  `json:"send_errors"`
	Network          int64  `json:"network"`
	Approximate      bool   `json:"approximate"`
	Verdict          string `json:"verdict"`
}

// extFlow is one data connection seen from both ends.
type extFlow struct {
	ID         int    `json:"id"`
	Direction  string `json:"direction"` // "client→server" or "server→client"
	SenderRole string `json:"sender_role"`
	// The sockets hold the requested and granted buffers, MSS and MTU.
	SenderSocket   *result.Socket `json:"sender_socket"`
	ReceiverSocket *result.Socket `json:"receiver_socket"`
	// Goodput is the receiver's bytes over the receiver's time; null when
	// the receiver's report is missing.
	GoodputBitsPerSecond *float64        `json:"goodput_bits_per_second"`
	ReadLengths          []extReadLength `json:"read_lengths,omitempty"`
	// TCP is the sender's TCP internals (figures.StreamFigures).
	TCP *figures.StreamFigures `json:"tcp,omitempty"`
}

// extReadLength is a histogram entry with its share of all reads.
type extReadLength struct {
	Length  int     `json:"length"`
	Count   int64   `json:"count"`
	Percent float64 `json:"percent"`
}

func extensionOf(r *result.Result) *extension {
	if r.ServerOutput != nil { // iperf3's own fields carry it (json.go)
		c := *r
		c.ServerOutput = nil
		r = &c
	}
	x := &extension{Result: jsonSafe(r), Flows: []extFlow{}}
	for _, d := range r.Directions() {
		for _, f := range d.Flows {
			xf := extFlow{ID: f.ID, Direction: d.Label(), SenderRole: d.SenderRole}
			if f.Sent != nil {
				sock := f.Sent.Socket
				xf.SenderSocket = &sock
				xf.TCP = figures.FiguresOf(f.Sent)
			}
			if s := f.Received; s != nil {
				sock := s.Socket
				xf.ReceiverSocket = &sock
				goodput := finite(result.Rate(s.Bytes, s.Seconds()))
				xf.GoodputBitsPerSecond = &goodput
				xf.ReadLengths = readShares(s)
			}
			x.Flows = append(x.Flows, xf)
		}
		if isUDP(r.Spec) {
			if _, received := directionUDP(d); received != nil {
				a := lossOf(r, d)
				x.UDPLoss = append(x.UDPLoss, extUDPLoss{
					Direction: d.Label(), SenderRole: d.SenderRole, Lost: a.Lost,
					ReceiverRcvbuf: a.ReceiverRcvbuf, ReceiverInErrors: a.ReceiverInErrors,
					SenderSndbuf: a.SenderSndbuf, SendErrors: a.SendErrors, Network: a.Network,
					Approximate: a.Approximate, Verdict: a.Verdict,
				})
			}
		} else if df := figures.DirectionOf(d, bottleneckOf(r)); df != nil {
			x.TCP = append(x.TCP, df)
		}
	}
	return x
}

// readShares gives every read length its share of the stream's reads.
func readShares(s *result.Stream) []extReadLength {
	total := readTotal(s)
	var out []extReadLength
	for _, rl := range s.ReadLengths {
		e := extReadLength{Length: rl.Length, Count: rl.Count}
		if total > 0 {
			e.Percent = 100 * float64(rl.Count) / float64(total)
		}
		out = append(out, e)
	}
	return out
}

// readTotal is the reads a stream's read lengths are shares of. The
// histogram counts every read of the test, its omitted start's too,
// where the stream's Calls leave that start out (they are the rows'
// sum): with -O the histogram's own sum is the larger, and the shares
// are of it, never above 100%. Without a call count, the histogram's sum.
func readTotal(s *result.Stream) int64 {
	var sum int64
	for _, rl := range s.ReadLengths {
		sum += rl.Count
	}
	return max(s.Calls, sum)
}

// jsonSafe returns r, or a copy with its non-finite floats zeroed: one
// NaN would make encoding/json refuse the whole document.
func jsonSafe(r *result.Result) *result.Result {
	if resultFinite(r) {
		return r
	}
	c := *r
	for _, e := range []*result.End{&c.Local, &c.Remote} {
		e.CPU = result.CPU{UserPercent: finite(e.CPU.UserPercent), SystemPercent: finite(e.CPU.SystemPercent), TotalPercent: finite(e.CPU.TotalPercent)}
		e.Streams = append([]result.Stream(nil), e.Streams...)
		for i := range e.Streams {
			e.Streams[i].Start, e.Streams[i].End = finite(e.Streams[i].Start), finite(e.Streams[i].End)
			e.Streams[i].UDP = safeUDP(e.Streams[i].UDP)
		}
		e.Intervals = append([]result.Interval(nil), e.Intervals...)
		for i := range e.Intervals {
			iv := &e.Intervals[i]
			iv.Start, iv.End = finite(iv.Start), finite(iv.End)
			iv.Streams = append([]result.StreamInterval(nil), iv.Streams...)
			for j := range iv.Streams {
				iv.Streams[j].UDP = safeUDP(iv.Streams[j].UDP)
			}
		}
	}
	return &c
}

// resultFinite reports whether every float in r is finite.
func resultFinite(r *result.Result) bool {
	ok := func(fs ...float64) bool {
		for _, f := range fs {
			if finite(f) != f {
				return false
			}
		}
		return true
	}
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		if !ok(e.CPU.UserPercent, e.CPU.SystemPercent, e.CPU.TotalPercent) {
			return false
		}
		for _, s := range e.Streams {
			if !ok(s.Start, s.End) || !udpFinite(s.UDP) {
				return false
			}
		}
		for _, iv := range e.Intervals {
			if !ok(iv.Start, iv.End) {
				return false
			}
			for _, si := range iv.Streams {
				if !udpFinite(si.UDP) {
					return false
				}
			}
		}
	}
	return true
}
