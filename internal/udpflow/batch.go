package udpflow

import "time"

// Segment is one datagram as received: its bytes, its receive time, and
// whether that time is shared with the previous segment (one GRO batch
// carries one timestamp).
type Segment struct {
	Payload []byte
	RecvNs  int64
	Shared  bool
}

// batchIO moves batches of datagrams on a connected UDP socket, with
// whatever the platform offers (sendmmsg/recvmmsg, GSO, GRO, kernel
// receive timestamps).
type batchIO interface {
	// send writes n datagrams of size bytes laid end to end in buf and
	// returns how many left.
	send(buf []byte, size, n int) (int, error)
	// recv blocks for at least one datagram and returns the segments
	// received; they are valid until the next call.
	recv() ([]Segment, error)
	// setReadDeadline ends recv at t: it then returns
	// os.ErrDeadlineExceeded. Safe to call from another goroutine.
	setReadDeadline(t time.Time)
	// close releases what recv holds beyond the socket (the socket itself
	// is the caller's); call it once the last recv has returned.
	close()
	// maxSendBatch is the most datagrams one send takes.
	maxSendBatch(size int) int
	features() Features
	// socketDrops is what the kernel dropped at the socket's receive
	// queue since it was opened, if the platform counts it; call it before
	// close.
	socketDrops() (uint64, bool)
}

// Features say what the socket's I/O uses; the report shows them.
type Features struct {
	GSO              bool `json:"gso"`
	GRO              bool `json:"gro"`
	KernelTimestamps bool `json:"kernel_timestamps"`
	Batch            bool `json:"batch"` // sendmmsg/recvmmsg
}
