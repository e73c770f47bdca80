package hostmon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// RootQdisc is the queueing discipline at the root of the interface that
// holds a local address: what the kernel does with the packets a test
// sends out of it ("fq", "fq_codel", "mq", "tbf", "noqueue" on lo).
type RootQdisc struct {
	Interface string // the interface's name, as in "eth0"
	Kind      string // the root qdisc's kind (TCA_KIND)
}

// NoQueue is the kind reported for an interface without a root qdisc
// record: the kernel sends its packets straight to the driver.
const NoQueue = "noqueue"

// Netlink and traffic-control numbers from linux/netlink.h,
// linux/rtnetlink.h and linux/pkt_sched.h. They live in a portable file so
// that the parser is tested and fuzzed on every system.
const (
	nlmsgHdrLen  = 16 // struct nlmsghdr
	tcmsgLen     = 20 // struct tcmsg
	rtattrHdrLen = 4  // struct rtattr
	nlmsgError   = 2
	nlmsgDone    = 3
	nlmFRequest  = 0x1
	nlmFDumpIntr = 0x10
	nlmFDump     = 0x300 // NLM_F_ROOT | NLM_F_MATCH
	rtmNewQdisc  = 36
	rtmGetQdisc  = 38
	tcaKind      = 1
	nlaTypeMask  = 0x3fff     // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER
	tcHRoot      = 0xffffffff // TC_H_ROOT: the parent of a root qdisc
	// maxQdiscKind bounds a kind's length; the kernel's are at most
	// IFNAMSIZ (16) bytes with the NUL.
	maxQdiscKind = 32
)

// qdiscRecord is one RTM_NEWQDISC message of a dump.
type qdiscRecord struct {
	Ifindex int32
	Parent  uint32
	Kind    string
}

// errDumpInterrupted says the qdiscs changed during the dump, whose
// records may then be inconsistent; asking again gives a clean one.
var errDumpInterrupted = errors.New("netlink: qdisc dump interrupted by a change")

// qdiscDumpRequest is an RTM_GETQDISC dump request. Netlink is in the
// host's byte order.
func qdiscDumpRequest(seq uint32, ifindex int32) []byte {
	b := make([]byte, nlmsgHdrLen+tcmsgLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], rtmGetQdisc)
	ne.PutUint16(b[6:], nlmFRequest|nlmFDump)
	ne.PutUint32(b[8:], seq)
	// pid 0, then tcmsg: family AF_UNSPEC, padding, ifindex (a hint:
	// kernels dump every interface's qdiscs regardless), handle, parent, info.
	ne.PutUint32(b[nlmsgHdrLen+4:], uint32(ifindex))
	return b
}

// align4 is NLMSG_ALIGN and RTA_ALIGN.
func align4(n int) int { return (n + 3) &^ 3 }

// parseQdiscMessages parses what one read of a qdisc dump returned: the
// RTM_NEWQDISC records of the request numbered seq, and whether the dump
// ended (NLMSG_DONE). A kernel error ends it with that error. Messages of
// another sequence number or type are skipped; anything malformed is an
// error, and no length is used before it is checked against the buffer.
func parseQdiscMessages(b []byte, seq uint32) (recs []qdiscRecord, done bool, err error) {
	ne := binary.NativeEndian
	for len(b) > 0 {
		if len(b) < nlmsgHdrLen {
			return recs, false, fmt.Errorf("netlink: %d bytes left, less than a message header", len(b))
		}
		n := int(ne.Uint32(b[0:4]))
		if n < nlmsgHdrLen || n > len(b) {
			return recs, false, fmt.Errorf("netlink: message length %d with %d bytes left", n, len(b))
		}
		typ, flags, mseq := ne.Uint16(b[4:6]), ne.Uint16(b[6:8]), ne.Uint32(b[8:12])
		body := b[nlmsgHdrLen:n]
		b = b[min(align4(n), len(b)):]
		if mseq != seq {
			continue
		}
		if flags&nlmFDumpIntr != 0 {
			return recs, false, errDumpInterrupted
		}
		switch typ {
		case nlmsgDone:
			return recs, true, nil
		case nlmsgError:
			if len(body) < 4 {
				return recs, false, errors.New("netlink: error message without its code")
			}
			if code := int32(ne.Uint32(body[0:4])); code != 0 {
				return recs, false, fmt.Errorf("netlink: %w", syscall.Errno(-int64(code)))
			}
		case rtmNewQdisc:
			r, err := parseTcmsg(body)
			if err != nil {
				return recs, false, err
			}
			recs = append(recs, r)
		}
	}
	return recs, false, nil
}

// parseTcmsg parses an RTM_NEWQDISC body: struct tcmsg, then attributes.
func parseTcmsg(b []byte) (qdiscRecord, error) {
	ne := binary.NativeEndian
	if len(b) < tcmsgLen {
		return qdiscRecord{}, fmt.Errorf("netlink: qdisc message of %d bytes, less than a tcmsg", len(b))
	}
	r := qdiscRecord{Ifindex: int32(ne.Uint32(b[4:8])), Parent: ne.Uint32(b[12:16])}
	for a := b[tcmsgLen:]; len(a) > 0; {
		if len(a) < rtattrHdrLen {
			return qdiscRecord{}, fmt.Errorf("netlink: %d bytes left, less than an attribute header", len(a))
		}
		n := int(ne.Uint16(a[0:2]))
		if n < rtattrHdrLen || n > len(a) {
			return qdiscRecord{}, fmt.Errorf("netlink: attribute length %d with %d bytes left", n, len(a))
		}
		if ne.Uint16(a[2:4])&nlaTypeMask == tcaKind {
			kind, err := parseKind(a[rtattrHdrLen:n])
			if err != nil {
				return qdiscRecord{}, err
			}
			r.Kind = kind
		}
		a = a[min(align4(n), len(a)):]
	}
	if r.Kind == "" {
		return qdiscRecord{}, errors.New("netlink: qdisc message without its kind")
	}
	return r, nil
}

// parseKind reads TCA_KIND: a NUL-terminated name of printable ASCII.
func parseKind(v []byte) (string, error) {
	for i, c := range v {
		if c == 0 {
			v = v[:i]
			break
		}
	}
	if len(v) == 0 || len(v) > maxQdiscKind {
		return "", fmt.Errorf("netlink: qdisc kind of %d bytes", len(v))
	}
	for _, c := range v {
		if c <= ' ' || c > '~' {
			return "", fmt.Errorf("netlink: qdisc kind %q is not a name", v)
		}
	}
	return string(v), nil
}

// rootKind is the kind of ifindex's root qdisc among recs.
func rootKind(recs []qdiscRecord, ifindex int) (string, bool) {
	for _, r := range recs {
		if int(r.Ifindex) == ifindex && r.Parent == tcHRoot {
			return r.Kind, true
		}
	}
	return "", false
}

// localInterface is an interface and the addresses it holds.
type localInterface struct {
	Index    int
	Name     string
	Loopback bool
	Addrs    []netip.Addr
}

// holding picks the interface that holds addr. Any 127/8 or ::1 address
// belongs to the loopback interface, which lists only 127.0.0.1/8; a
// link-local address's zone names its interface.
func holding(addr netip.Addr, ifaces []localInterface) (localInterface, bool) {
	zone := addr.Zone()
	addr = addr.Unmap().WithZone("")
	for _, ifc := range ifaces {
		if zone != "" && zone != ifc.Name {
			continue
		}
		for _, a := range ifc.Addrs {
			if a.Unmap().WithZone("") == addr {
				return ifc, true
			}
		}
	}
	if addr.IsLoopback() {
		for _, ifc := range ifaces {
			if ifc.Loopback {
				return ifc, true
			}
		}
	}
	return localInterface{}, false
}

// localInterfaces lists this host's interfaces with their addresses, as
// seen from the calling thread's network namespace.
func localInterfaces() ([]localInterface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]localInterface, 0, len(ifs))
	for _, ifc := range ifs {
		li := localInterface{Index: ifc.Index, Name: ifc.Name, Loopback: ifc.Flags&net.FlagLoopback != 0}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue // an interface that went away meanwhile
		}
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok {
					li.Addrs = append(li.Addrs, ip)
				}
			}
		}
		out = append(out, li)
	}
	return out, nil
}
