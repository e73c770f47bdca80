package agent

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wireperf/wireperf/internal/auth"
)

func sessionPair() (agentSide, controllerSide *sealer) {
	s := &auth.Session{User: "ctl", Key: []byte("agent-key-0123456789abcdefXYZ"), ServerNonce: bytes.Repeat([]byte{1}, 32), ClientNonce: bytes.Repeat([]byte{2}, 32)}
	return newSealer(s, true), newSealer(s, false)
}

func TestSealedFramesRoundTrip(t *testing.T) {
	ag, ctl := sessionPair()
	var wire bytes.Buffer
	for i := range 3 {
		if err := ctl.write(&wire, TypeClockRequest, ClockRequest{T1: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		fr, err := ag.read(&wire, nil)
		var q ClockRequest
		if err != nil || fr.Type != TypeClockRequest || fr.Decode(&q) != nil || q.T1 != int64(i) {
			t.Fatalf("frame %d: %+v %v", i, fr, err)
		}
	}
}

// Every change in flight is refused: a flipped byte, a frame replayed,
// two frames swapped, a frame reflected back to its sender, a frame
// under another session's key.
func TestSealedFramesRefuseChanges(t *testing.T) {
	frames := func(s *sealer) [][]byte {
		var out [][]byte
		for _, target := range []string{"127.0.0.1:15210", "127.0.0.1:15211"} {
			var b bytes.Buffer
			s.write(&b, TypePrepare, Prepare{Target: target})
			out = append(out, b.Bytes())
		}
		return out
	}
	for name, tc := range map[string]func(f [][]byte) []byte{
		"flipped": func(f [][]byte) []byte {
			b := bytes.Clone(f[0])
			i := bytes.Index(b, []byte("127.0.0.1"))
			b[i+8] = '2'
			return b
		},
		"replayed": func(f [][]byte) []byte { return append(bytes.Clone(f[0]), f[0]...) },
		"swapped":  func(f [][]byte) []byte { return append(bytes.Clone(f[1]), f[0]...) },
	} {
		ag, ctl := sessionPair()
		wire := bytes.NewReader(tc(frames(ctl)))
		var err error
		for err == nil {
			_, err = ag.read(wire, nil)
		}
		if !errors.Is(err, ErrBadMAC) {
			t.Errorf("%s: %v, want ErrBadMAC", name, err)
		}
	}
	// Reflected: what the controller sent, read back by the controller.
	_, ctl := sessionPair()
	var b bytes.Buffer
	ctl.write(&b, TypeStop, Stop{})
	if _, err := ctl.read(&b, nil); !errors.Is(err, ErrBadMAC) {
		t.Errorf("reflected: %v", err)
	}
	// Another session's key.
	other := newSealer(&auth.Session{User: "ctl", Key: []byte("another-key-0123456789abcdefXYZ"), ServerNonce: make([]byte, 32), ClientNonce: make([]byte, 32)}, false)
	ag, _ := sessionPair()
	b.Reset()
	other.write(&b, TypeStop, Stop{})
	if _, err := ag.read(&b, nil); !errors.Is(err, ErrBadMAC) {
		t.Errorf("another key: %v", err)
	}
}

func FuzzSealedRead(f *testing.F) {
	_, ctl := sessionPair()
	var b bytes.Buffer
	ctl.write(&b, TypePrepare, Prepare{Target: "127.0.0.1:1"})
	f.Add(b.Bytes())
	f.Add([]byte{0, 0, 0, 1, byte(TypeStop)})
	f.Add([]byte{0, 0, 0, 0x20, byte(TypeStop), '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		ag, _ := sessionPair()
		r := bytes.NewReader(data)
		for range 4 {
			fr, err := ag.read(r, nil)
			if err != nil {
				return
			}
			if len(fr.Body) > fr.Type.maxLen() {
				t.Fatalf("a %d-byte body of %v passed", len(fr.Body), fr.Type)
			}
		}
	})
}
