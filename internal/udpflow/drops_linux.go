package udpflow

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketDrops is the datagrams the kernel dropped at this socket's receive
// queue since it was opened (sk_drops): SO_MEMINFO's drop count, read now,
// else the last SO_RXQ_OVFL count a message carried, which misses drops
// after the last message queued. It counts each skb once: where the
// socket takes GRO batches, one drop may be a whole batch.
func (io *linuxIO) socketDrops() (uint64, bool) {
	fd := io.rfd
	if fd < 0 {
		if fd = dupSocket(io.conn); fd < 0 {
			return uint64(io.ovfl), io.ovflOn
		}
		defer unix.Close(fd)
	}
	if n, ok := memInfoDrops(fd); ok {
		return uint64(max(n, io.ovfl)), true
	}
	return uint64(io.ovfl), io.ovflOn
}

// memInfoDrops reads SO_MEMINFO (Linux 4.6 and later) on fd: its
// SK_MEMINFO_DROPS entry.
func memInfoDrops(fd int) (uint32, bool) {
	var info [unix.SK_MEMINFO_VARS + 8]uint32 // room for entries newer kernels add
	l := uint32(unsafe.Sizeof(info))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_MEMINFO,
		uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 || l < 4*(unix.SK_MEMINFO_DROPS+1) {
		return 0, false
	}
	return info[unix.SK_MEMINFO_DROPS], true
}
