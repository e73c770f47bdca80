package rr

import (
	"encoding/binary"
	"testing"
	"time"
)

// cmsg builds one 64-bit Linux ancillary message, padded to 8 bytes.
func cmsg(level, typ int32, data []byte) []byte {
	l := cmsgHeaderLen64 + len(data)
	b := make([]byte, (l+7)&^7)
	binary.NativeEndian.PutUint64(b[0:8], uint64(l))
	binary.NativeEndian.PutUint32(b[8:12], uint32(level))
	binary.NativeEndian.PutUint32(b[12:16], uint32(typ))
	copy(b[cmsgHeaderLen64:], data)
	return b
}

func timespecs(ns ...int64) []byte {
	b := make([]byte, 16*len(ns))
	for i, v := range ns {
		binary.NativeEndian.PutUint64(b[16*i:], uint64(v/1e9))
		binary.NativeEndian.PutUint64(b[16*i+8:], uint64(v%1e9))
	}
	return b
}

func TestParseStamps(t *testing.T) {
	const sw, hw = int64(1_765_000_000_123_456_789), int64(1_765_000_001_000_000_007)
	extErr := cmsg(0, 11, make([]byte, 32)) // IP_RECVERR beside a send stamp
	numbered := func(level, typ int32, origin byte, id uint32, n int) []byte {
		b := make([]byte, n)
		b[extErrOrigin] = origin
		if n >= extErrData+4 {
			binary.NativeEndian.PutUint32(b[extErrData:], id)
		}
		return cmsg(level, typ, b)
	}
	stamp := cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(sw, 0, 0))
	for _, tc := range []struct {
		name string
		oob  []byte
		want kernelStamps
	}{
		{"none", nil, kernelStamps{}},
		{"SCM_TIMESTAMPNS", cmsg(cmsgSolSocket, cmsgTimestampNS, timespecs(sw)), kernelStamps{sw: sw}},
		{"SCM_TIMESTAMPING software", cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(sw, 0, 0)), kernelStamps{sw: sw}},
		{"SCM_TIMESTAMPING hardware", cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(0, 0, hw)), kernelStamps{hw: hw}},
		{"both", cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(sw, 0, hw)), kernelStamps{sw: sw, hw: hw}},
		{"after an extended error", append(extErr, cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(sw, 0, 0))...), kernelStamps{sw: sw}},
		{"numbered (OPT_ID), IPv4", append(numbered(0, 11, 4, 7, 32), stamp...), kernelStamps{sw: sw, id: 7, hasID: true}},
		{"numbered (OPT_ID), IPv6", append(stamp, numbered(41, 25, 4, 1<<31, 44)...), kernelStamps{sw: sw, id: 1 << 31, hasID: true}},
		{"an ICMP error is not numbered", append(numbered(0, 11, 2, 7, 32), stamp...), kernelStamps{sw: sw}},
		{"extended error too short", append(numbered(0, 11, 4, 7, 15), stamp...), kernelStamps{sw: sw}},
		{"other level", cmsg(41, cmsgTimestamping, timespecs(sw, 0, hw)), kernelStamps{}},
		{"timestamping too short", cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(sw, 0)), kernelStamps{}},
		{"truncated", cmsg(cmsgSolSocket, cmsgTimestampNS, timespecs(sw))[:24], kernelStamps{}},
		{"length zero", make([]byte, 32), kernelStamps{}},
		{"bad nanoseconds", cmsg(cmsgSolSocket, cmsgTimestampNS, func() []byte {
			b := timespecs(sw)
			binary.NativeEndian.PutUint64(b[8:], 2e9)
			return b
		}()), kernelStamps{}},
	} {
		if got := parseStamps(tc.oob); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func FuzzParseStamps(f *testing.F) {
	f.Add(cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(1e18, 0, 2e18)))
	f.Add(append(cmsg(0, 11, make([]byte, 32)), cmsg(cmsgSolSocket, cmsgTimestampNS, timespecs(1e18))...))
	f.Add(append(cmsg(0, 11, append(make([]byte, 4), 4, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0)), cmsg(cmsgSolSocket, cmsgTimestamping, timespecs(1e18, 0, 0))...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, oob []byte) {
		st := parseStamps(oob)
		if st.sw < 0 || st.hw < 0 {
			t.Fatalf("negative stamp %+v", st)
		}
	})
}

// A request's kernel send stamp moves the client's send share out of the
// network RTT and the forward delay; hardware stamps on both ends make
// the network RTT the NIC's.
func TestSendStampsInTheNetworkRTT(t *testing.T) {
	base := int64(1_765_000_000) * int64(time.Second)
	us := func(v int64) int64 { return v * int64(time.Microsecond) }
	// Request leaves 30 µs after T1, 10 µs each way, server 5 µs,
	// response read 7 µs after it arrived.
	t1 := base
	tx := t1 + us(30)
	t2 := tx + us(10)
	t3 := t2 + us(5)
	rx := t3 + us(10)
	t4 := rx + us(7)
	s := sample{t1: t1, t2: t2, t3: t3, t4: t4, rx: rx, tx: tx, sendNs: us(40), rtt: time.Duration(t4 - t1), done: time.Unix(0, t4)}

	a := newAccumulator("", 64, 64)
	a.add(s)
	p := a.point(0, true)
	if p.NetworkRTT.P50 < 19.9 || p.NetworkRTT.P50 > 20.1 {
		t.Errorf("network RTT %.2f µs, want 20 (the path's)", p.NetworkRTT.P50)
	}
	if p.RTT.P50 < 61.9 || p.RTT.P50 > 62.1 {
		t.Errorf("RTT %.2f µs, want 62", p.RTT.P50)
	}
	if p.ForwardOWD == nil || p.ForwardOWD.P50 < 9.9 || p.ForwardOWD.P50 > 10.1 {
		t.Errorf("forward OWD %+v, want 10 µs from the request's leaving", p.ForwardOWD)
	}

	// Without the send stamp the send share stays in the network RTT.
	b := newAccumulator("", 64, 64)
	s0 := s
	s0.tx = 0
	b.add(s0)
	if got := b.point(0, false).NetworkRTT.P50; got < 49.9 || got > 50.1 {
		t.Errorf("network RTT without a send stamp %.2f µs, want 50", got)
	}

	// Hardware stamps on the NIC's own clock, 1 s off the host's.
	c := newAccumulator("", 64, 64)
	sh := s
	sh.txHW = tx + us(2) - int64(time.Second)
	sh.rxHW = rx - us(2) - int64(time.Second)
	c.add(sh)
	if got := c.point(0, false).NetworkRTT.P50; got < 15.9 || got > 16.1 {
		t.Errorf("network RTT from hardware stamps %.2f µs, want 16", got)
	}
}
