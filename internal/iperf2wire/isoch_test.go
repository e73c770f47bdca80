package iperf2wire

import (
	"encoding/binary"
	"testing"
	"time"
)

// capturedIsoch is the first 26 words of a datagram of iperf 2.1.8's
// `iperf -c 239.1.2.4 -u -T 1 -t 0.35 --isochronous=10:1m,0 --ipg 0.1
// -l 1000`: frame 5 (after 4) of 12,500 bytes every 100 ms.
var capturedIsoch = []uint32{0x36, 0x6b15eb91, 0x9b053, 0, 0x680100d8, 1, 0x1389, 0x3e8, 0, 0xffffffdd, 0, 0,
	0x10000, 0x20001, 0x80003, 0, 0x100000, 0, 0, 0x186a0, 0x6b15eb91, 0x370ad, 4, 5, 0x30d4, 0x30d4}

func TestParseIsochCapture(t *testing.T) {
	b := make([]byte, 1000)
	for i, w := range capturedIsoch {
		binary.BigEndian.PutUint32(b[4*i:], w)
	}
	f, ok := ParseIsoch(b)
	if !ok {
		t.Fatal("not isochronous")
	}
	want := Isoch{Period: 100 * time.Millisecond, Start: time.Unix(0x6b15eb91, 0x370ad*1000), PrevFrame: 4, Frame: 5, BurstSize: 12500, Remaining: 12500}
	if f != want {
		t.Errorf("got %+v\nwant %+v", f, want)
	}
	d, err := Parse(b)
	if err != nil || d.Seq != 0x36 {
		t.Errorf("seq %d (%v)", d.Seq, err)
	}
	// Written back from its parts, the header is the same.
	out := make([]byte, 1000)
	h := Header(Test{Port: 5001, Length: 1000, Rate: 0x100000, Duration: 350 * time.Millisecond})
	if err := Put(out, Datagram{Seq: 0x36, Sent: d.Sent, Client: h}); err != nil {
		t.Fatal(err)
	}
	if !PutIsoch(out, f) {
		t.Fatal("PutIsoch refused 1000 bytes")
	}
	for i := range capturedIsoch {
		if g, w := binary.BigEndian.Uint32(out[4*i:]), capturedIsoch[i]; g != w {
			t.Errorf("word %d: %#x, want %#x", i, g, w)
		}
	}
}

func TestIsochRefuses(t *testing.T) {
	short := make([]byte, MinIsochPayload-1)
	if PutIsoch(short, Isoch{Frame: 1}) {
		t.Error("PutIsoch wrote into a payload too short")
	}
	plain := make([]byte, 1000)
	if err := Put(plain, Datagram{Seq: 1, Client: Header(Test{Port: 1, Length: 1000, Duration: time.Second})}); err != nil {
		t.Fatal(err)
	}
	if _, ok := ParseIsoch(plain); ok {
		t.Error("a plain datagram parsed as isochronous")
	}
	if _, ok := ParseIsoch(plain[:50]); ok {
		t.Error("50 bytes parsed as isochronous")
	}
}
