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
	other := h.MarshalHello()
	copy(other, "WPRA") // an agent's greeting, say: not a hello
	if _, ok := ParseHello(other); ok {
		t.Fatal("another magic parsed as a hello")
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
		_ = fuzzSigner.Verify(data)
		// The receiver's matcher agrees with Parse.
		m := newMatcher(h.Token, h.StreamID)
		if seq, sent, ok := m.match(data); !ok || seq != h.Seq || sent != h.SentNs {
			t.Fatalf("matcher: %d %d %v, Parse: %+v", seq, sent, ok, h)
		}
		_, _ = ParseHello(data)
	})
}

var fuzzSigner = NewSigner([]byte("fuzz key"))

func TestSigner(t *testing.T) {
	if NewSigner(nil) != nil {
		t.Fatal("a signer without a key")
	}
	s := NewSigner([]byte("a test's datagram key"))
	b := make([]byte, 200)
	(&Header{Token: [16]byte{1}, StreamID: 2}).Put(b)
	PutSeqTime(b, 77, 123456789)
	if s.Verify(b) {
		t.Fatal("an unsigned header verified")
	}
	s.Sign(b)
	if !s.Verify(b) {
		t.Fatal("a signed header did not verify")
	}
	if h, err := Parse(b); err != nil || h.Seq != 77 {
		t.Fatalf("a signed header parses as %+v, %v", h, err)
	}
	if NewSigner([]byte("another key")).Verify(b) {
		t.Fatal("verified under another key")
	}
	if s.Verify(b[:SignedHeaderLen-1]) {
		t.Fatal("a truncated MAC verified")
	}
	for i := 0; i < SignedHeaderLen*8; i++ {
		c := append([]byte(nil), b...)
		c[i/8] ^= 1 << (i % 8)
		if s.Verify(c) {
			t.Fatalf("bit %d flipped, still verified", i)
		}
	}
	c := append([]byte(nil), b...)
	c[SignedHeaderLen] ^= 1
	if !s.Verify(c) {
		t.Fatal("the filler is not covered, yet a change to it failed")
	}
	if n := testing.AllocsPerRun(100, func() { s.Sign(b); _ = s.Verify(b) }); n != 0 {
		t.Errorf("%v allocations per sign and verify, want 0", n)
	}
}

func TestMatcher(t *testing.T) {
	tok := [16]byte{3, 1, 4, 1, 5}
	m := newMatcher(tok, 9)
	b := make([]byte, SignedHeaderLen)
	(&Header{Token: tok, StreamID: 9, Seq: 42, SentNs: -7}).Put(b)
	if seq, sent, ok := m.match(b); !ok || seq != 42 || sent != -7 {
		t.Fatalf("match = %d %d %v", seq, sent, ok)
	}
	NewSigner([]byte("k")).Sign(b) // the flags byte may vary
	if _, _, ok := m.match(b); !ok {
		t.Fatal("a signed datagram of the stream did not match")
	}
	for i := 0; i < 24; i++ {
		if i == 3 {
			continue
		}
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, _, ok := m.match(c); ok {
			t.Errorf("byte %d changed, still matched", i)
		}
	}
	if _, _, ok := m.match(b[:HeaderLen-1]); ok {
		t.Error("a short datagram matched")
	}
}
