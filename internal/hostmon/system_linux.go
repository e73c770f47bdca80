package hostmon

import "golang.org/x/sys/unix"

// System describes the host from uname(2). uname cannot fail on Linux, but
// if it did we still return what runtime and os know.
func System() SystemInfo {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return portableSystem()
	}
	return SystemInfo{
		Hostname: unix.ByteSliceToString(u.Nodename[:]),
		OS:       unix.ByteSliceToString(u.Sysname[:]),
		Release:  unix.ByteSliceToString(u.Release[:]),
		Machine:  unix.ByteSliceToString(u.Machine[:]),
	}
}
