package hostmon

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"reflect"
	"syscall"
	"testing"
)

// capturedDump is a Linux 6.18 host's answer to qdiscDumpRequest(7, 0):
// lo (ifindex 1) with noqueue, eth0 (4) with pfifo_fast, each with its
// options and statistics attributes, then NLMSG_DONE. Little-endian.
const capturedDump = "940000002400020007000000524b0000000000000100000000000000ffffffff020000000c0001006e6f71756575650005000c00000000003000070014000100000000000000000000000000000000001800030000000000000000000000000000000000000000002c00030000000000000000000000000000000000000000000000000000000000000000000000000000000000b00000002400020007000000524b0000000000000400000000000000ffffffff020000000f000100706669666f5f66617374000018000200030000000102020201020000010101010101010105000c00000000003000070014000100bf321800000000000f3d0000000000001800030000000000000000000000000000000000000000002c000300bf321800000000000f3d000000000000000000000000000000000000000000000000000000000000140000000300020007000000524b000000000000"

func littleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// nlmsg builds a netlink message, padded to 4 bytes as the kernel sends it.
func nlmsg(typ, flags uint16, seq uint32, body []byte) []byte {
	ne := binary.NativeEndian
	b := make([]byte, nlmsgHdrLen, nlmsgHdrLen+len(body)+3)
	ne.PutUint32(b[0:], uint32(nlmsgHdrLen+len(body)))
	ne.PutUint16(b[4:], typ)
	ne.PutUint16(b[6:], flags)
	ne.PutUint32(b[8:], seq)
	b = append(b, body...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// tcmsg builds an RTM_NEWQDISC body followed by attrs.
func tcmsg(ifindex int32, parent uint32, attrs ...[]byte) []byte {
	ne := binary.NativeEndian
	b := make([]byte, tcmsgLen)
	ne.PutUint32(b[4:], uint32(ifindex))
	ne.PutUint32(b[12:], parent)
	for _, a := range attrs {
		b = append(b, a...)
	}
	return b
}

// rtattr builds an attribute, padded to 4 bytes.
func rtattr(typ uint16, val []byte) []byte {
	ne := binary.NativeEndian
	b := make([]byte, rtattrHdrLen, rtattrHdrLen+len(val)+3)
	ne.PutUint16(b[0:], uint16(rtattrHdrLen+len(val)))
	ne.PutUint16(b[2:], typ)
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func kind(s string) []byte { return rtattr(tcaKind, append([]byte(s), 0)) }

func errMsg(seq uint32, code int32) []byte {
	body := make([]byte, 4+nlmsgHdrLen)
	binary.NativeEndian.PutUint32(body, uint32(code))
	return nlmsg(nlmsgError, 0, seq, body)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestQdiscDumpRequest(t *testing.T) {
	got := qdiscDumpRequest(0x01020304, 5)
	want := make([]byte, 36)
	ne := binary.NativeEndian
	ne.PutUint32(want[0:], 36)
	ne.PutUint16(want[4:], 38)    // RTM_GETQDISC
	ne.PutUint16(want[6:], 0x301) // NLM_F_REQUEST | NLM_F_DUMP
	ne.PutUint32(want[8:], 0x01020304)
	ne.PutUint32(want[20:], 5) // tcmsg.tcm_ifindex
	if !bytes.Equal(got, want) {
		t.Fatalf("request\n got %x\nwant %x", got, want)
	}
}

func TestParseCapturedQdiscDump(t *testing.T) {
	if !littleEndian() {
		t.Skip("the captured dump is little-endian")
	}
	b, err := hex.DecodeString(capturedDump)
	if err != nil {
		t.Fatal(err)
	}
	recs, done, err := parseQdiscMessages(b, 7)
	want := []qdiscRecord{{1, tcHRoot, "noqueue"}, {4, tcHRoot, "pfifo_fast"}}
	if err != nil || !done || !reflect.DeepEqual(recs, want) {
		t.Fatalf("parse = %v, done %v, %v; want %v, done", recs, done, err, want)
	}
	// The same bytes answer another request: nothing of them is ours.
	if recs, done, err := parseQdiscMessages(b, 8); err != nil || done || len(recs) != 0 {
		t.Errorf("another sequence number: %v, done %v, %v; want nothing", recs, done, err)
	}
}

func TestParseQdiscMessages(t *testing.T) {
	const seq = 42
	mqRoot := nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, tcHRoot, rtattr(2, []byte{1, 2, 3}), kind("mq")))
	child := nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, 0x80010001, kind("fq_codel")))
	done := nlmsg(nlmsgDone, 2, seq, []byte{0, 0, 0, 0})
	badLen := nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, tcHRoot, kind("mq")))
	binary.NativeEndian.PutUint32(badLen, uint32(len(badLen)+4))
	shortAttr := tcmsg(2, tcHRoot, kind("mq"))
	binary.NativeEndian.PutUint16(shortAttr[tcmsgLen:], 3)
	longAttr := tcmsg(2, tcHRoot, kind("mq"))
	binary.NativeEndian.PutUint16(longAttr[tcmsgLen:], 200)
	unpadded := nlmsg(rtmNewQdisc, 2, seq, tcmsg(3, tcHRoot, rtattr(tcaKind, []byte("tbf"))))
	unpadded = unpadded[:nlmsgHdrLen+tcmsgLen+rtattrHdrLen+3]
	binary.NativeEndian.PutUint32(unpadded, uint32(len(unpadded)))
	binary.NativeEndian.PutUint16(unpadded[nlmsgHdrLen+tcmsgLen:], rtattrHdrLen+3)
	tests := []struct {
		name    string
		in      []byte
		want    []qdiscRecord
		done    bool
		wantErr error // nil: none; errAny: some
	}{
		{"empty read", nil, nil, false, nil},
		{"root, child, done", cat(mqRoot, child, done),
			[]qdiscRecord{{2, tcHRoot, "mq"}, {2, 0x80010001, "fq_codel"}}, true, nil},
		{"more to come", cat(mqRoot, child), []qdiscRecord{{2, tcHRoot, "mq"}, {2, 0x80010001, "fq_codel"}}, false, nil},
		{"done stops the read", cat(done, mqRoot), nil, true, nil},
		{"other requests skipped", cat(nlmsg(rtmNewQdisc, 2, seq+1, []byte{1}), mqRoot),
			[]qdiscRecord{{2, tcHRoot, "mq"}}, false, nil},
		{"other types skipped", cat(nlmsg(99, 0, seq, nil), mqRoot), []qdiscRecord{{2, tcHRoot, "mq"}}, false, nil},
		{"an acknowledgement is no error", cat(errMsg(seq, 0), mqRoot), []qdiscRecord{{2, tcHRoot, "mq"}}, false, nil},
		{"kind with the network byte order flag", nlmsg(rtmNewQdisc, 2, seq, tcmsg(5, tcHRoot, rtattr(tcaKind|0x4000, []byte("fq\x00")))),
			[]qdiscRecord{{5, tcHRoot, "fq"}}, false, nil},
		{"kind without its NUL", nlmsg(rtmNewQdisc, 2, seq, tcmsg(5, tcHRoot, rtattr(tcaKind, []byte("htb")))),
			[]qdiscRecord{{5, tcHRoot, "htb"}}, false, nil},
		{"last message unpadded", unpadded, []qdiscRecord{{3, tcHRoot, "tbf"}}, false, nil},
		{"kernel error", cat(mqRoot, errMsg(seq, -int32(syscall.EPERM))), []qdiscRecord{{2, tcHRoot, "mq"}}, false, syscall.EPERM},
		{"dump interrupted", nlmsg(rtmNewQdisc, 2|nlmFDumpIntr, seq, tcmsg(2, tcHRoot, kind("mq"))), nil, false, errDumpInterrupted},
		{"error without its code", nlmsg(nlmsgError, 0, seq, []byte{1, 2}), nil, false, errAny},
		{"truncated header", mqRoot[:10], nil, false, errAny},
		{"length past the end", badLen, nil, false, errAny},
		{"length below a header", func() []byte { b := cat(mqRoot); binary.NativeEndian.PutUint32(b, 8); return b }(), nil, false, errAny},
		{"short tcmsg", nlmsg(rtmNewQdisc, 2, seq, make([]byte, tcmsgLen-1)), nil, false, errAny},
		{"attribute shorter than its header", nlmsg(rtmNewQdisc, 2, seq, shortAttr), nil, false, errAny},
		{"attribute past the end", nlmsg(rtmNewQdisc, 2, seq, longAttr), nil, false, errAny},
		{"truncated attribute header", nlmsg(rtmNewQdisc, 2, seq, cat(tcmsg(2, tcHRoot, kind("mq")), []byte{8, 0})), nil, false, errAny},
		{"no kind", nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, tcHRoot, rtattr(2, []byte{0, 0, 0, 0}))), nil, false, errAny},
		{"empty kind", nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, tcHRoot, kind(""))), nil, false, errAny},
		{"kind not a name", nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, tcHRoot, kind("f q"))), nil, false, errAny},
		{"kind too long", nlmsg(rtmNewQdisc, 2, seq, tcmsg(2, tcHRoot, kind(string(bytes.Repeat([]byte("x"), maxQdiscKind+1))))), nil, false, errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, done, err := parseQdiscMessages(tt.in, seq)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(recs, tt.want) || done != tt.done {
				t.Errorf("records %v done %v, want %v done %v", recs, done, tt.want, tt.done)
			}
		})
	}
}

var errAny = errors.New("any error")

func TestRootKind(t *testing.T) {
	recs := []qdiscRecord{
		{2, 0x80010001, "fq_codel"}, // mq's child, listed first
		{2, 0xfffffff1, "clsact"},   // ingress side: not the root
		{2, tcHRoot, "mq"},
		{3, tcHRoot, "tbf"},
	}
	for _, tt := range []struct {
		ifindex int
		kind    string
		ok      bool
	}{{2, "mq", true}, {3, "tbf", true}, {4, "", false}} {
		if kind, ok := rootKind(recs, tt.ifindex); kind != tt.kind || ok != tt.ok {
			t.Errorf("rootKind(%d) = %q, %v; want %q, %v", tt.ifindex, kind, ok, tt.kind, tt.ok)
		}
	}
}

func TestHolding(t *testing.T) {
	a := netip.MustParseAddr
	lo := localInterface{Index: 1, Name: "lo", Loopback: true, Addrs: []netip.Addr{a("127.0.0.1"), a("::1")}}
	eth0 := localInterface{Index: 2, Name: "eth0", Addrs: []netip.Addr{a("192.0.2.2"), a("fe80::1")}}
	eth1 := localInterface{Index: 3, Name: "eth1", Addrs: []netip.Addr{a("198.51.100.7"), a("fe80::1")}}
	ifaces := []localInterface{lo, eth0, eth1}
	for _, tt := range []struct {
		addr string
		want string // "" for none
	}{
		{"192.0.2.2", "eth0"},
		{"198.51.100.7", "eth1"},
		{"::ffff:198.51.100.7", "eth1"}, // a dual-stack socket's view of IPv4
		{"127.0.0.1", "lo"},
		{"127.3.2.1", "lo"}, // all of 127/8 is lo's
		{"::1", "lo"},
		{"fe80::1%eth1", "eth1"},
		{"fe80::1%eth9", ""},
		{"203.0.113.1", ""},
	} {
		got, ok := holding(a(tt.addr), ifaces)
		if got.Name != tt.want || ok != (tt.want != "") {
			t.Errorf("holding(%s) = %q, %v; want %q", tt.addr, got.Name, ok, tt.want)
		}
	}
	if _, ok := holding(a("127.0.0.1"), []localInterface{eth0}); ok {
		t.Error("a loopback address found an interface on a host without loopback")
	}
}

func FuzzParseQdiscMessages(f *testing.F) {
	if b, err := hex.DecodeString(capturedDump); err == nil {
		f.Add(b, uint32(7))
	}
	f.Add(cat(nlmsg(rtmNewQdisc, 2, 1, tcmsg(2, tcHRoot, kind("mq"))), nlmsg(nlmsgDone, 2, 1, []byte{0, 0, 0, 0})), uint32(1))
	f.Add(errMsg(1, -1), uint32(1))
	f.Fuzz(func(t *testing.T, data []byte, seq uint32) {
		recs, done, err := parseQdiscMessages(data, seq)
		if done && err != nil {
			t.Fatalf("done with an error: %v", err)
		}
		if len(recs)*(nlmsgHdrLen+tcmsgLen+rtattrHdrLen+1) > len(data) {
			t.Fatalf("%d records from %d bytes", len(recs), len(data))
		}
		for _, r := range recs {
			if r.Kind == "" || len(r.Kind) > maxQdiscKind {
				t.Fatalf("kind %q", r.Kind)
			}
		}
	})
}
