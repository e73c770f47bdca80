package iperf3

import (
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// dataStream is one data stream of a test, TCP or UDP. id is our number
// (1..N, in the order the client opens them: with --bidir the client's
// sending streams first); on the wire it is wireStreamID(id). Its flow
// is what the shared runner (internal/flowrun) drives: a basic TCP flow,
// or an iperf3-format UDP stream.
type dataStream struct {
	id     int
	sender bool // this end sends on it
	flow   flowrun.Flow
	socket result.Socket
	local  string
	remote string
	tcp    *tcpflow.Stream // a TCP stream's socket; nil for UDP
}

func newTCPStream(id int, sender bool, conn *net.TCPConn, sock result.Socket, s spec.Spec) *dataStream {
	return newTCPStreamWith(tcpflow.NewStream(id, sender, conn), sock, s)
}

// newTCPStreamWith is newTCPStream over a stream set up by the caller
// (with -F's file), with what s asks of its data (--repeating-payload,
// --skip-rx-copy).
func newTCPStreamWith(st *tcpflow.Stream, sock result.Socket, s spec.Spec) *dataStream {
	id, sender, conn := st.ID, st.Sender, st.Conn
	if s.RepeatingPayload {
		st.UseRepeatingPayload()
	}
	if s.SkipRxCopy {
		st.UseSkipRxCopy()
	}
	return &dataStream{
		id: id, sender: sender, flow: flowrun.NewBasicTCPFlow(st, s.Length).AskMPTCP(s.MPTCP), socket: sock, tcp: st,
		local: conn.LocalAddr().String(), remote: conn.RemoteAddr().String(),
	}
}

func newUDPDataStream(id int, u *udpStream, sock result.Socket) *dataStream {
	d := &dataStream{id: id, sender: u.sender, socket: sock, local: u.conn.LocalAddr().String()}
	if ra := u.conn.RemoteAddr(); ra != nil {
		d.remote = ra.String()
	}
	d.flow = &udpFlow{udpStream: u, id: id, local: d.local, remote: d.remote}
	return d
}

func (d *dataStream) close() { _ = d.flow.Close() }

// flows are the streams' flows, for the runner.
func flows(streams []*dataStream) []flowrun.Flow {
	out := make([]flowrun.Flow, 0, len(streams))
	for _, st := range streams {
		out = append(out, st.flow)
	}
	return out
}

// sockets are the streams' sockets by id, for the runner.
func sockets(streams []*dataStream) map[int]result.Socket {
	out := make(map[int]result.Socket, len(streams))
	for _, st := range streams {
		out[st.id] = st.socket
	}
	return out
}

// received is the bytes every receiving stream has read, since the start.
func received(streams []*dataStream) int64 {
	var n int64
	for _, st := range streams {
		if !st.sender {
			n += st.flow.Bytes()
		}
	}
	return n
}

// udpFlow is an iperf3 UDP stream as the runner drives it: its interval
// and total figures are iperf3's (udpFigures).
type udpFlow struct {
	*udpStream
	id            int
	local, remote string
	prev, omit    udpSnap // at the last interval cut; at the end of the omitted start
	final         udpSnap // when the total was taken
}

func (f *udpFlow) ID() int                 { return f.id }
func (f *udpFlow) Sender() bool            { return f.sender }
func (f *udpFlow) Start(b flowrun.Begin)   { f.start(b.Epoch, b.Budget) }
func (f *udpFlow) Stop(deadline time.Time) { f.stop(deadline) }
func (f *udpFlow) Abort()                  { f.abort() }
func (f *udpFlow) Done() <-chan struct{}   { return f.done }
func (f *udpFlow) Bytes() int64            { return f.bytes.Load() }
func (f *udpFlow) LastByte() time.Duration { return time.Duration(f.lastNano.Load()) }
func (f *udpFlow) Addrs() (string, string) { return f.local, f.remote }
func (f *udpFlow) Close() error            { return f.conn.Close() }
func (f *udpFlow) MarkOmitEnd()            { f.omit = f.prev }

func (f *udpFlow) Sample(si *result.StreamInterval, _ bool) {
	cur := f.snap()
	u := udpFigures(f.prev, cur, f.sender)
	si.UDP = &u
	f.prev = cur
}

func (f *udpFlow) Total(rs *result.Stream) {
	rs.Calls = f.packets.Load()
	f.final = f.snap()
	u := udpFigures(f.omit, f.final, f.sender)
	rs.UDP = &u
}

// udpFigures are a UDP stream's figures between two snapshots.
func udpFigures(from, to udpSnap, sender bool) result.UDP {
	if sender {
		return result.UDP{Sent: to.packets - from.packets, SendErrors: to.sendErrs - from.sendErrs}
	}
	u := result.UDP{
		Received:        to.packets - from.packets,
		Lost:            max(to.rx.lost-from.rx.lost, 0),
		Reordered:       to.rx.outOfOrder - from.rx.outOfOrder,
		JitterMs:        to.rx.jitter * 1000,
		JitterMethod:    "user-space clock",
		JitterSamples:   to.rx.samples - from.rx.samples,
		TimestampSource: "user-space",
	}
	u.Expected = u.Received + u.Lost
	return u
}

// newRunner is the shared runner over a test's streams, with iperf3's
// accounting.
func newRunner(s spec.Spec, streams []*dataStream, onInterval func(result.Interval)) *flowrun.Runner {
	r := flowrun.New(s, flows(streams), sockets(streams), onInterval)
	r.Iperf3Accounting = true
	return r
}

// finish ends the runner (flowrun.Runner.Finish) and builds this end's
// iperf3 results from its view.
func finish(run *flowrun.Runner, streams []*dataStream, role string) (result.End, Results) {
	end := run.Finish(role)
	res := Results{
		CPUTotal: Float(end.CPU.TotalPercent), CPUUser: Float(end.CPU.UserPercent), CPUSystem: Float(end.CPU.SystemPercent),
		SenderHasRetransmits: -1,
		Streams:              []StreamResults{},
	}
	for i, st := range streams {
		rs := end.Streams[i]
		wire := StreamResults{ID: Int(wireStreamID(st.id)), Bytes: Int(rs.Bytes), Retransmits: -1, EndTime: Float(rs.End - rs.Start)}
		switch f := st.flow.(type) {
		case *udpFlow:
			if st.sender {
				res.SenderHasRetransmits = 0
				wire.Packets, wire.OmittedPackets = Int(f.final.packets), Int(f.omit.packets)
			} else {
				wire.Packets, wire.OmittedPackets = Int(f.final.rx.maxSeq), Int(f.omit.rx.maxSeq)
				wire.Errors, wire.OmittedErrors = Int(f.final.rx.lost), Int(f.omit.rx.lost)
				wire.Jitter = Float(f.final.rx.jitter)
			}
		case *flowrun.TCPFlow:
			if st.sender {
				res.SenderHasRetransmits = 0
				if f.FinalInfo() {
					wire.Retransmits = Int(rs.Retransmits)
					res.SenderHasRetransmits = 1
				}
			}
		}
		if rs.Socket.Congestion != "" {
			res.CongestionUsed = rs.Socket.Congestion
		}
		res.Streams = append(res.Streams, wire)
	}
	return end, res
}
