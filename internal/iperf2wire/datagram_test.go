package iperf2wire

import (
	"encoding/hex"
	"testing"
	"time"
)

// capturedFirst and capturedFIN are the first 80 bytes of the first and
// the last datagram /usr/bin/iperf 2.1.8 sent for
// `iperf -c 239.1.2.3 -u -T 1 -t 1 -b 100k -l 200` (a 200-byte payload;
// the rest was zeros).
const (
	capturedFirst = "000000016b15e127000662eb00000000480100980000000100001389000000c800000000ffffff9c000000000000000000000000000200010008000300000000000186a0000000000000000000000000"
	capturedFIN   = "ffffffbe6b15e1280006c151ffffffff480100980000000100001389000000c800000000ffffff9c000000000000000000000000000200010008000300000000000186a0000000000000000000000000"
)

func payload(t *testing.T, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, make([]byte, 200-len(b))...)
}

func TestParseIperf2Capture(t *testing.T) {
	d, err := Parse(payload(t, capturedFirst))
	if err != nil {
		t.Fatal(err)
	}
	if d.Seq != 1 || d.Last() {
		t.Errorf("seq %d last %v, want 1, false", d.Seq, d.Last())
	}
	if want := time.Unix(0x6b15e127, 0x662eb*1000); !d.Sent.Equal(want) {
		t.Errorf("sent %v, want %v", d.Sent, want)
	}
	h := d.Client
	if h == nil {
		t.Fatal("no client header")
	}
	if h.Port != 5001 || h.BufLen != 200 || h.Threads != 1 || h.Duration() != time.Second {
		t.Errorf("header %+v: want port 5001, 200 bytes, 1 thread, 1 s", h)
	}
	if h.Rate != 100000 || h.VersionHi != 2<<16|1 || h.VersionLo != 8<<16|3 {
		t.Errorf("rate %d version %x.%x: want 100000, 2.1.8", h.Rate, h.VersionHi, h.VersionLo)
	}
	fin, err := Parse(payload(t, capturedFIN))
	if err != nil {
		t.Fatal(err)
	}
	if !fin.Last() || fin.Number() != 66 {
		t.Errorf("FIN seq %d: want the last datagram, number 66", fin.Seq)
	}
}

// TestPutAsIperf2 writes what iperf 2.1.8 wrote, byte for byte.
func TestPutAsIperf2(t *testing.T) {
	want := payload(t, capturedFIN)
	got := make([]byte, 200)
	h := Header(Test{Port: 5001, Length: 200, Rate: 100000, Duration: time.Second})
	if err := Put(got, Datagram{Seq: -66, Sent: time.Unix(0x6b15e128, 0x6c151*1000), Client: h}); err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != hex.EncodeToString(want) {
		t.Errorf("Put wrote\n%x\nwant\n%x", got, want)
	}
	PutSeq(got, 1, time.Unix(0x6b15e127, 0x662eb*1000))
	if first := payload(t, capturedFirst); hex.EncodeToString(got) != hex.EncodeToString(first) {
		t.Errorf("PutSeq wrote\n%x\nwant\n%x", got, first)
	}
}

func TestRoundTripSizes(t *testing.T) {
	h := Header(Test{Port: 5201, Length: 1448, Rate: 1e6, Bytes: 1 << 20})
	sent := time.Unix(1_800_000_000, 123456000)
	for _, n := range []int{16, 20, 39, 40, 100, 167, 168, 1472} {
		for _, seq := range []int64{1, 1 << 31, 1<<32 + 5, -(1<<33 + 1), -7} {
			b := make([]byte, n)
			if err := Put(b, Datagram{Seq: seq, Sent: sent, Client: h}); err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			d, err := Parse(b)
			if err != nil {
				t.Fatalf("%d bytes seq %d: %v", n, seq, err)
			}
			if !d.Sent.Equal(sent) {
				t.Errorf("%d bytes: sent %v", n, d.Sent)
			}
			// Without a client header the number is iperf 2's 32-bit one.
			want := seq
			if n < HeaderLen+ClientHeaderV1Len {
				want = int64(int32(uint32(uint64(seq))))
			}
			if d.Seq != want {
				t.Errorf("%d bytes: seq %d, want %d", n, d.Seq, want)
			}
			if n >= HeaderLen+ClientHeaderV1Len && d.Client.Amount != 1<<20 {
				t.Errorf("%d bytes: amount %d", n, d.Client.Amount)
			}
			if ext := n >= HeaderLen+ExtendedHeaderLen; n >= 40 && (d.Client.Rate == 1e6) != ext {
				t.Errorf("%d bytes: rate %d, extended header %v", n, d.Client.Rate, ext)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	if _, err := Parse(make([]byte, 15)); err == nil {
		t.Error("15 bytes: parsed")
	}
	if _, err := Parse(make([]byte, 40)); err == nil {
		t.Error("sequence number 0: parsed")
	}
	b := make([]byte, 16)
	b[3] = 1
	b[8], b[9], b[10], b[11] = 0, 0x0f, 0x42, 0x40 // 1,000,000 µs
	if _, err := Parse(b); err == nil {
		t.Error("usec 1000000: parsed")
	}
	if err := Put(make([]byte, 15), Datagram{Seq: 1}); err == nil {
		t.Error("Put into 15 bytes: no error")
	}
	if err := Put(make([]byte, 16), Datagram{}); err == nil {
		t.Error("Put of sequence number 0: no error")
	}
}

func FuzzParse(f *testing.F) {
	for _, h := range []string{capturedFirst, capturedFIN, "00000001000000000000000000000000"} {
		b, _ := hex.DecodeString(h)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if f, ok := ParseIsoch(b); ok && f.Start.Nanosecond()%1000 != 0 {
			t.Fatalf("frame start %v: finer than a microsecond", f.Start)
		}
		d, err := Parse(b)
		if err != nil {
			return
		}
		if d.Seq == 0 || d.Number() <= 0 && d.Seq != -1<<63 {
			t.Fatalf("seq %d number %d", d.Seq, d.Number())
		}
		// What parses writes back to the same header words.
		out := make([]byte, len(b))
		if err := Put(out, d); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Sent.Equal(d.Sent) {
			t.Fatalf("sent %v then %v", d.Sent, again.Sent)
		}
	})
}
