package trace

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// queued builds an IP_RECVERR control message's data: a
// sock_extended_err and the offender's sockaddr.
func queued(origin, typ, code uint8, from netip.Addr) []byte {
	b := make([]byte, extendedErrLen)
	b[4], b[5], b[6] = origin, typ, code
	if from.Is4() {
		sa := make([]byte, 16)
		binary.NativeEndian.PutUint16(sa, afInet)
		a := from.As4()
		copy(sa[4:], a[:])
		return append(b, sa...)
	}
	sa := make([]byte, 28)
	binary.NativeEndian.PutUint16(sa, afInet6)
	a := from.As16()
	copy(sa[8:], a[:])
	return append(b, sa...)
}

func TestParseQueuedError(t *testing.T) {
	router, dst6 := netip.MustParseAddr("10.77.0.1"), netip.MustParseAddr("fd00::2")
	for _, c := range []struct {
		b    []byte
		from netip.Addr
		kind ReplyKind
	}{
		{queued(eeOriginICMP, 11, 0, router), router, TimeExceeded},
		{queued(eeOriginICMP, 3, 3, router), router, Unreachable},
		{queued(eeOriginICMP6, 3, 0, dst6), dst6, TimeExceeded},
		{queued(eeOriginICMP6, 1, 4, dst6), dst6, Unreachable},
	} {
		q, err := parseQueuedError(c.b)
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := q.kind(); !ok || k != c.kind || q.Offender != c.from {
			t.Errorf("%x: %+v kind %v, want %v from %v", c.b, q, k, c.kind, c.from)
		}
	}
	local := queued(1, 0, 0, router) // SO_EE_ORIGIN_LOCAL: a message too long, say
	if _, err := parseQueuedError(local); err == nil {
		t.Error("a local error read as an ICMP one")
	}
	if q, _ := parseQueuedError(queued(eeOriginICMP, 0, 0, router)); func() bool { _, ok := q.kind(); return ok }() {
		t.Error("an echo reply's type read as an answer")
	}
	for _, short := range [][]byte{nil, make([]byte, 15), queued(eeOriginICMP, 11, 0, router)[:extendedErrLen+1], queued(eeOriginICMP6, 3, 0, dst6)[:extendedErrLen+20]} {
		if _, err := parseQueuedError(short); err == nil {
			t.Errorf("%d bytes read as a queued error", len(short))
		}
	}
}

// FuzzParseQueuedError: any bytes give a queued error or an error, never
// a panic.
func FuzzParseQueuedError(f *testing.F) {
	f.Add(queued(eeOriginICMP, 11, 0, netip.MustParseAddr("10.0.0.1")))
	f.Add(queued(eeOriginICMP6, 1, 4, netip.MustParseAddr("::1")))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := parseQueuedError(b)
		if err == nil && !q.Offender.IsValid() {
			t.Fatalf("%x: no error and no offender", b)
		}
	})
}
