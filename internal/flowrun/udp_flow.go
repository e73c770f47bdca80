package flowrun

import (
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/sockopt"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
)

// UDPFlow is a UDP stream: a sender or a receiver on its own socket.
type UDPFlow struct {
	idv  int
	conn *net.UDPConn
	snd  *udpflow.Sender
	rcv  *udpflow.Receiver

	prevSent, omitSent     int64
	prevErrors, omitErrors int64
	// An isochronous sender's frame counts at the last row and at the
	// omitted start's end.
	prevFrames, omitFrames result.Frames
	// peerSent is the sender's datagram count, learned at the end; -1
	// until then.
	peerSent int64
}

func (f *UDPFlow) ID() int      { return f.idv }
func (f *UDPFlow) Sender() bool { return f.snd != nil }

// Close closes the socket; a sender or receiver still running is told to
// end first, since it uses a descriptor of its own (udpflow's takeOver)
// that closing the socket does not end.
func (f *UDPFlow) Close() error {
	if f.rcv != nil {
		f.rcv.Abort()
	}
	if f.snd != nil {
		f.snd.Stop()
	}
	return f.conn.Close()
}

// Conn is the stream's socket.
func (f *UDPFlow) Conn() *net.UDPConn { return f.conn }

func (f *UDPFlow) Start(b Begin) {
	if f.snd != nil {
		f.snd.Start(b.Epoch, b.Budget)
	} else {
		f.rcv.Start(b.Epoch)
	}
}

func (f *UDPFlow) Stop(deadline time.Time) {
	if f.snd != nil {
		f.snd.Stop()
	} else {
		f.rcv.Stop(deadline)
	}
}

func (f *UDPFlow) Abort() {
	if f.snd != nil {
		f.snd.Stop()
	} else {
		f.rcv.Abort()
	}
}

func (f *UDPFlow) Done() <-chan struct{} {
	if f.snd != nil {
		return f.snd.Done()
	}
	return f.rcv.Done()
}

func (f *UDPFlow) Bytes() int64 {
	if f.snd != nil {
		return f.snd.Bytes()
	}
	return f.rcv.Bytes()
}

func (f *UDPFlow) LastByte() time.Duration {
	if f.snd != nil {
		return f.snd.LastByte()
	}
	return f.rcv.LastByte()
}

// FirstByte is when a receiver's first datagram arrived; 0 for a sender.
func (f *UDPFlow) FirstByte() time.Duration {
	if f.rcv == nil {
		return 0
	}
	return f.rcv.FirstByte()
}

func (f *UDPFlow) Err() error {
	if f.snd != nil {
		return f.snd.Err()
	}
	return f.rcv.Err()
}

func (f *UDPFlow) Addrs() (string, string) {
	return f.conn.LocalAddr().String(), f.conn.RemoteAddr().String()
}

func (f *UDPFlow) Sample(si *result.StreamInterval, _ bool) {
	if f.snd != nil {
		sent, errs := f.snd.Sent(), f.snd.SendErrors()
		si.UDP = &result.UDP{Sent: sent - f.prevSent, SendErrors: errs - f.prevErrors}
		f.prevSent, f.prevErrors = sent, errs
		if fr := f.snd.Frames(); fr != nil {
			si.UDP.Frames = framesSince(*fr, f.prevFrames)
			si.UDP.Frames.LateMaxMs = f.snd.TakeRowLateMaxMs()
			f.prevFrames = *fr
		}
		return
	}
	u := f.rcv.Cut()
	si.UDP = &u
}

func (f *UDPFlow) MarkOmitEnd() {
	f.omitSent, f.omitErrors, f.omitFrames = f.prevSent, f.prevErrors, f.prevFrames
}

// framesSince is a sender's frame counts since an earlier reading; the
// latest start is the whole stream's so far (a row takes its own).
func framesSince(now, then result.Frames) *result.Frames {
	return &result.Frames{Sent: now.Sent - then.Sent, Late: now.Late - then.Late, LateMaxMs: now.LateMaxMs}
}

// total: a sender's counts exclude the omitted start. A receiver's cover
// the whole stream, since loss and order are judged by sequence numbers
// across the omit boundary.
func (f *UDPFlow) Total(rs *result.Stream) {
	if f.snd != nil {
		rs.UDP = &result.UDP{
			Sent:        f.snd.Sent() - f.omitSent,
			SendErrors:  f.snd.SendErrors() - f.omitErrors,
			Spacing:     f.snd.Spacing(),
			Schedule:    f.snd.Schedule(),
			GSOSegments: f.snd.GSOSegments(),
		}
		if fr := f.snd.Frames(); fr != nil {
			rs.UDP.Frames = framesSince(*fr, f.omitFrames)
		}
		return
	}
	u := f.rcv.Final(f.peerSent)
	u.Forged = f.rcv.Forged()
	u.Invalid += f.rcv.Foreign() + u.Forged
	rs.UDP = &u
	rs.UDPSettlements = f.rcv.Settlements()
}

// NewUDPFlow sets up one UDP stream on a connected socket: the spec's
// buffers and TOS, then a sender or a receiver. key, when set, signs and
// checks every datagram (authentication is on; auth.Session.DatagramKey).
func NewUDPFlow(conn *net.UDPConn, s spec.Spec, token [16]byte, id int, send bool, key []byte) (*UDPFlow, error) {
	if raw, err := conn.SyscallConn(); err == nil {
		if err := sockopt.Apply(raw, netsetup.UDPOptions(s, !send)); err != nil {
			return nil, err
		}
	}
	f := &UDPFlow{idv: id, conn: conn, peerSent: -1}
	var err error
	if send {
		f.snd, err = udpflow.NewSender(conn, udpflow.SenderConfig{
			Token: token, StreamID: uint32(id), Size: s.Length, Pace: paceFor(s), GSO: !s.NoGSO, Key: key,
			RepeatingPayload: s.RepeatingPayload,
			Frames:           s.Isochronous,
		})
	} else {
		f.rcv, err = udpflow.NewReceiver(conn, udpflow.ReceiverConfig{
			Token: token, StreamID: uint32(id), Size: s.Length, GRO: !s.NoGSO, LateThreshold: s.EffectiveLateThreshold(), Key: key,
			Frames: s.Isochronous != nil,
		})
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// UDPSocket is what a UDP stream's socket asked for and was granted.
func UDPSocket(conn *net.UDPConn, s spec.Spec, send bool) result.Socket {
	sock := GrantedSocket(conn, s)
	sock.RcvBufRequested = int64(netsetup.UDPOptions(s, !send).RcvBuf)
	_, sock.RcvBufCap = bufferCaps(0, sock.RcvBufRequested)
	return sock
}

// paceFor turns a spec's -b, --pps or --spacing into a schedule; nil sends
// as fast as the socket takes datagrams. A rate whose datagrams would be
// closer than udpflow.MinSlot goes out in bursts that fill one slot each,
// unless the user chose the burst.
func paceFor(s spec.Spec) *pace.Config {
	var cfg pace.Config
	switch {
	case s.Spacing > 0:
		cfg = pace.ForSpacing(s.Spacing)
		cfg.Spin = s.Spin
	case s.PPS > 0:
		cfg = pace.ForPPS(s.PPS, autoBurst(s.Burst, time.Duration(float64(time.Second)/float64(s.PPS))))
	case s.Rate > 0:
		gap := time.Duration(float64(s.Length*8) / s.Rate * float64(time.Second))
		cfg = pace.ForRate(s.Rate, s.Length, autoBurst(s.Burst, gap))
	default:
		return nil
	}
	return &cfg
}

func autoBurst(asked int, gap time.Duration) int {
	if asked > 0 {
		return asked
	}
	if gap <= 0 || gap >= udpflow.MinSlot {
		return 1
	}
	return min(256, int((udpflow.MinSlot+gap-1)/gap))
}
