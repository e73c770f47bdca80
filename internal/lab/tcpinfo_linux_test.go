package lab

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

type tcpInfo = unix.TCPInfo

func getTCPInfo(c net.Conn) (tcpInfo, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return tcpInfo{}, errors.New("not a syscall.Conn")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return tcpInfo{}, err
	}
	var ti *unix.TCPInfo
	var gerr error
	err = rc.Control(func(fd uintptr) {
		ti, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	})
	if err != nil {
		return tcpInfo{}, err
	}
	if gerr != nil {
		return tcpInfo{}, gerr
	}
	return *ti, nil
}
