package udpflow

import (
	"net"

	"golang.org/x/sys/unix"
)

// KernelTimestamps asks the kernel to stamp each datagram's arrival on
// conn (SO_TIMESTAMPNS), for a receiver that reads one datagram a call
// (ReadMsgUDP), and says whether it will.
func KernelTimestamps(conn *net.UDPConn) bool {
	raw, err := conn.SyscallConn()
	if err != nil {
		return false
	}
	on := false
	_ = raw.Control(func(fd uintptr) {
		on = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
	})
	return on
}

// ReceiveTime is the kernel's arrival time in a message's ancillary data
// (ns since the Unix epoch), or 0 when it holds none.
func ReceiveTime(oob []byte) int64 { return parseAncillary(oob).recvNs }
