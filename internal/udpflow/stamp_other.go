//go:build !linux

package udpflow

import "net"

// KernelTimestamps: only Linux stamps arrivals here; elsewhere receivers
// time them in user space.
func KernelTimestamps(*net.UDPConn) bool { return false }

// ReceiveTime is 0: no kernel arrival times off Linux.
func ReceiveTime([]byte) int64 { return 0 }
