package hostmon

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds on one qdisc dump: a host with thousands of interfaces answers in
// a few hundred reads of 32 KiB; a kernel that sent more, or too slowly,
// is not waited for.
const (
	qdiscDumpReads   = 1024
	qdiscDumpTimeout = 2 * time.Second
	qdiscReadBuffer  = 64 << 10
)

// ReadRootQdisc returns the interface that holds the local address addr
// and the kind of its root qdisc, read over rtnetlink. An interface with
// no root qdisc record has none: NoQueue. Both lookups happen in the
// calling thread's network namespace, which a caller locked to a thread
// in a lab's namespace relies on.
func ReadRootQdisc(addr netip.Addr) (RootQdisc, error) {
	ifaces, err := localInterfaces()
	if err != nil {
		return RootQdisc{}, err
	}
	ifc, ok := holding(addr, ifaces)
	if !ok {
		return RootQdisc{}, fmt.Errorf("no interface holds %v", addr)
	}
	kind, err := dumpRootKind(ifc.Index)
	if errors.Is(err, errDumpInterrupted) {
		kind, err = dumpRootKind(ifc.Index)
	}
	if err != nil {
		return RootQdisc{}, fmt.Errorf("qdisc of %s: %w", ifc.Name, err)
	}
	return RootQdisc{Interface: ifc.Name, Kind: kind}, nil
}

// dumpRootKind asks the kernel for every qdisc (RTM_GETQDISC with
// NLM_F_DUMP) and returns the kind of ifindex's root one.
func dumpRootKind(ifindex int) (string, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return "", fmt.Errorf("netlink socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(qdiscDumpTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return "", fmt.Errorf("netlink receive timeout: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return "", fmt.Errorf("netlink bind: %w", err)
	}
	seq := uint32(time.Now().UnixNano())
	kernel := &unix.SockaddrNetlink{Family: unix.AF_NETLINK}
	if err := unix.Sendto(fd, qdiscDumpRequest(seq, int32(ifindex)), 0, kernel); err != nil {
		return "", fmt.Errorf("netlink request: %w", err)
	}
	deadline := time.Now().Add(qdiscDumpTimeout)
	buf := make([]byte, qdiscReadBuffer)
	for range qdiscDumpReads {
		if time.Now().After(deadline) {
			break
		}
		n, from, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("netlink read: %w", err)
		}
		if n > len(buf) {
			return "", fmt.Errorf("netlink: a message of %d bytes, more than %d", n, len(buf))
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // not from the kernel
		}
		recs, done, err := parseQdiscMessages(buf[:n], seq)
		if err != nil {
			return "", err
		}
		if kind, ok := rootKind(recs, ifindex); ok {
			return kind, nil
		}
		if done {
			return NoQueue, nil
		}
	}
	return "", errors.New("netlink: the qdisc dump did not end in time")
}
