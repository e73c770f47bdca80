//go:build !linux

package udpflow

import (
	"net"
	"time"
)

// plainIO sends and receives one datagram per call, timed in user space.
type plainIO struct {
	conn *net.UDPConn
	buf  []byte
	segs []Segment
}

func newBatchIO(conn *net.UDPConn, size int, _ bool) (batchIO, error) {
	return &plainIO{conn: conn, buf: make([]byte, size+1), segs: make([]Segment, 1)}, nil
}

func (io *plainIO) features() Features   { return Features{} }
func (io *plainIO) maxSendBatch(int) int { return 1 }

func (io *plainIO) send(buf []byte, size, n int) (int, error) {
	for i := 0; i < n; i++ {
		if _, err := io.conn.Write(buf[i*size : (i+1)*size]); err != nil {
			return i, err
		}
	}
	return n, nil
}

func (io *plainIO) recv() ([]Segment, error) {
	n, err := io.conn.Read(io.buf)
	if err != nil {
		return nil, err
	}
	io.segs[0] = Segment{Payload: io.buf[:n], RecvNs: time.Now().UnixNano()}
	return io.segs, nil
}

func (io *plainIO) setReadDeadline(t time.Time) { _ = io.conn.SetReadDeadline(t) }
func (io *plainIO) close()                      {}

// socketDrops: no per-socket drop count here.
func (io *plainIO) socketDrops() (uint64, bool) { return 0, false }
