package udpflow

import (
	"errors"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{StreamID: 7, Seq: 1<<40 + 3, SentNs: 1796018150123456789}
	h.Token[0], h.Token[15] = 1, 2
	b := make([]byte, 1448)
	h.Put(b)
	got, err := Parse(b)
	if err != nil || got != h {
		t.Fatalf("Parse = %+v, %v; want %+v", got, err, h)
	}
	PutSeqTime(b, 9, -5)
	got, _ = Parse(b)
	if got.Seq != 9 || got.SentNs != -5 || got.Token != h.Token || got.StreamID != 7 {
		t.Fatalf("after PutSeqTime: %+v", got)
	}
}

func TestParseRejects(t *testing.T) {
	good := make([]byte, HeaderLen)
	(&Header{}).Put(good)
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"one short", good[:HeaderLen-1], ErrShort},
		{"iperf3 datagram", append([]byte{0, 0, 0, 1, 0, 0, 0, 2}, make([]byte, 40)...), ErrNotOurs},
		{"future version", append([]byte{'W', 'U', 9}, good[3:]...), ErrBadVersion},
	}
	for _, tc := range tests {
		if _, err := Parse(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestHello(t *testing.T) {
	h := Hello{StreamID: 3}
	h.Token[5] = 9
	if got, ok := ParseHello(h.MarshalHello()); !ok || got != h {
		t.Fatalf("hello round trip: %+v %v", got, ok)
	}
	if got, ok := ParseAck(h.MarshalAck()); !ok || got != h {
		t.Fatalf("ack round trip: %+v %v", got, ok)
	}
	if _, ok := ParseHello(h.MarshalAck()); ok {
		t.Fatal("an ack parsed as a hello")
	}
	if _, ok := ParseHello(h.MarshalHello()[:HelloLen-1]); ok {
		t.Fatal("a short hello parsed")
	}
}

func FuzzParse(f *testing.F) {
	b := make([]byte, HeaderLen)
	(&Header{Seq: 5}).Put(b)
	f.Add(b)
	f.Add([]byte("WU"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Parse(data)
		if err != nil {
			return
		}
		out := make([]byte, HeaderLen)
		h.Put(out)
		back, err := Parse(out)
		if err != nil || back != h {
			t.Fatalf("re-encode differs: %+v vs %+v", back, h)
		}
		_, _ = ParseHello(data)
		_, _ = ParseAck(data)
	})
}
