package iperf3

import (
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/tcpflow"
)

// dataStream is one data stream of a test, TCP or UDP. id is our number
// (1..N, in the order the client opens them: with --bidir the client's
// sending streams first); on the wire it is wireStreamID(id).
type dataStream struct {
	id     int
	sender bool // this end sends on it
	tcp    *tcpflow.Stream
	udp    *udpStream
	socket result.Socket
	local  string
	remote string
}

func newTCPStream(id int, sender bool, conn *net.TCPConn, sock result.Socket) *dataStream {
	return &dataStream{
		id: id, sender: sender, tcp: tcpflow.NewStream(id, sender, conn), socket: sock,
		local: conn.LocalAddr().String(), remote: conn.RemoteAddr().String(),
	}
}

func newUDPDataStream(id int, u *udpStream, sock result.Socket) *dataStream {
	d := &dataStream{id: id, sender: u.sender, udp: u, socket: sock, local: u.conn.LocalAddr().String()}
	if ra := u.conn.RemoteAddr(); ra != nil {
		d.remote = ra.String()
	}
	return d
}

func (d *dataStream) start(epoch time.Time, length int, budget *tcpflow.Budget) {
	if d.tcp != nil {
		d.tcp.Start(epoch, make([]byte, length), budget)
		return
	}
	d.udp.start(epoch, budget)
}

func (d *dataStream) bytes() int64 {
	if d.tcp != nil {
		return d.tcp.Bytes()
	}
	return d.udp.bytes.Load()
}

func (d *dataStream) calls() int64 {
	if d.tcp != nil {
		return d.tcp.Calls()
	}
	return d.udp.packets.Load()
}

func (d *dataStream) lastByte() time.Duration {
	if d.tcp != nil {
		return d.tcp.LastByte()
	}
	return time.Duration(d.udp.lastNano.Load())
}

func (d *dataStream) done() <-chan struct{} {
	if d.tcp != nil {
		return d.tcp.Done()
	}
	return d.udp.done
}

func (d *dataStream) stop(deadline time.Time) {
	if d.tcp != nil {
		d.tcp.Stop(deadline)
		return
	}
	d.udp.stop(deadline)
}

func (d *dataStream) abort() {
	if d.tcp != nil {
		d.tcp.Abort()
		return
	}
	d.udp.abort()
}

func (d *dataStream) err() error {
	if d.tcp != nil {
		return d.tcp.Err()
	}
	return d.udp.Err()
}

func (d *dataStream) close() {
	if d.tcp != nil {
		_ = d.tcp.Conn.Close()
		return
	}
	_ = d.udp.conn.Close()
}

// tcpConn is the stream's TCP connection, nil for UDP.
func (d *dataStream) tcpConn() *net.TCPConn {
	if d.tcp != nil {
		return d.tcp.Conn
	}
	return nil
}
