package udpflow

import "time"

// A receiver that sleeps in its receive call is woken by the next
// arrival once it has emptied the queue. At tens of Gbit/s that is a
// wake-up of another CPU's thread per GSO send, paid inside the sender's
// send call on loopback (about a fifth of a GSO sender's CPU) or in the
// NIC's softirq. A receiver whose last read brought much data instead
// sleeps a short fixed time off the socket's wait queue, so that the
// arrivals meanwhile wake nobody, and then takes what queued in one call:
// one timer wake-up on its own CPU per coalesceDelay at most.
//
// The arrival times stay exact only where the kernel stamps each
// datagram (SO_TIMESTAMPNS); a receiver that stamps at read time never
// waits.
const (
	// coalesceBytes is the least a read must bring for the next to wait.
	// A GSO send carries at most gsoMaxBytes, and a read of plain
	// datagrams at most recvBatch of them (46 KB at 1448 bytes), so a
	// receiver waits only after reading two or more GRO messages at once:
	// the sender is ahead of it.
	coalesceBytes = 64 << 10
	// coalesceDelay holds at 100 Gbit/s 625 kB, a small part of the
	// receive buffer the receiver asks for.
	coalesceDelay = 50 * time.Microsecond
)

// coalesceWait is how long a receiver sleeps before its next read, after
// a read of msgs messages (batch at most) carrying bytes.
func coalesceWait(msgs, batch, bytes int, kernelTimes bool) time.Duration {
	switch {
	case !kernelTimes:
		return 0
	case msgs >= batch:
		return 0 // more is queued: read it now
	case bytes < coalesceBytes:
		return 0 // a low rate: an arrival's wake-up is cheap enough
	}
	return coalesceDelay
}
