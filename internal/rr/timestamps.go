package rr

import "encoding/binary"

// kernelStamps are a message's kernel timestamps on the host's wall
// clock (software) and on its NIC's clock (hardware), in ns; 0 where
// the kernel gave none. The two clocks are not comparable: a hardware
// stamp is only ever subtracted from another of the same NIC.
type kernelStamps struct {
	sw, hw int64
	// id is a send stamp's number (SOF_TIMESTAMPING_OPT_ID: on UDP, the
	// socket's sends counted from 0), when hasID.
	id    uint32
	hasID bool
}

// Ancillary message levels and types, as Linux numbers them; the parser
// is plain Go so that it is tested (and fuzzed) on every platform.
const (
	cmsgSolSocket       = 1  // SOL_SOCKET
	cmsgTimestampNS     = 35 // SCM_TIMESTAMPNS
	cmsgTimestamping    = 37 // SCM_TIMESTAMPING: three timespecs, software first, hardware third
	cmsgHeaderLen64     = 16 // struct cmsghdr on 64-bit Linux: len (8), level (4), type (4)
	cmsgAlign64         = 8
	timespecLen64       = 16
	timestampingPayload = 3 * timespecLen64

	// A send stamp comes from the error queue beside a struct
	// sock_extended_err (IP_RECVERR or IPV6_RECVERR) of origin
	// SO_EE_ORIGIN_TIMESTAMPING, whose ee_data is the stamp's number.
	cmsgSolIP          = 0  // SOL_IP
	cmsgIPRecvErr      = 11 // IP_RECVERR
	cmsgSolIPv6        = 41 // SOL_IPV6
	cmsgIPv6RecvErr    = 25 // IPV6_RECVERR
	extErrLen          = 16 // ee_errno (4), origin, type, code, pad, ee_info (4), ee_data (4)
	extErrOrigin       = 4  // the byte holding ee_origin
	extErrData         = 12 // the offset of ee_data
	eeOriginTimestamps = 4  // SO_EE_ORIGIN_TIMESTAMPING
)

// parseStamps finds the kernel timestamps in a message's ancillary data
// as 64-bit Linux lays it out (little- or big-endian as the host is). It
// never reads past oob, whatever its bytes: a truncated or malformed
// header ends the walk with what was found so far.
func parseStamps(oob []byte) kernelStamps {
	var st kernelStamps
	for len(oob) >= cmsgHeaderLen64 {
		l := binary.NativeEndian.Uint64(oob[0:8])
		if l < cmsgHeaderLen64 || l > uint64(len(oob)) {
			return st
		}
		level := int32(binary.NativeEndian.Uint32(oob[8:12]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:16]))
		data := oob[cmsgHeaderLen64:l]
		if (level == cmsgSolIP && typ == cmsgIPRecvErr || level == cmsgSolIPv6 && typ == cmsgIPv6RecvErr) &&
			len(data) >= extErrLen && data[extErrOrigin] == eeOriginTimestamps {
			st.id, st.hasID = binary.NativeEndian.Uint32(data[extErrData:extErrData+4]), true
		}
		if level == cmsgSolSocket {
			switch {
			case typ == cmsgTimestampNS && len(data) >= timespecLen64:
				st.sw = timespecNs(data[0:16])
			case typ == cmsgTimestamping && len(data) >= timestampingPayload:
				st.sw = timespecNs(data[0:16])
				st.hw = timespecNs(data[32:48])
			}
		}
		next := (l + cmsgAlign64 - 1) &^ (cmsgAlign64 - 1)
		if next > uint64(len(oob)) {
			return st
		}
		oob = oob[next:]
	}
	return st
}

// timespecNs reads a 64-bit struct timespec; an unset one (all zero) or
// one out of range is 0.
func timespecNs(b []byte) int64 {
	sec := int64(binary.NativeEndian.Uint64(b[0:8]))
	nsec := int64(binary.NativeEndian.Uint64(b[8:16]))
	if sec <= 0 || sec > 1<<33 || nsec < 0 || nsec >= 1e9 {
		return 0
	}
	return sec*1e9 + nsec
}
