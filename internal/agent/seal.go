package agent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/proto"
)

// After the handshake every frame, both ways, carries a MAC: 16 bytes of
// HMAC-SHA256, under a key of its direction derived from the session
// (auth.Session.FrameKey), over the frame's sequence number in its
// direction (8 bytes, from 0), its type and its body. So an on-path
// attacker can't change a frame (a Prepare's target), replay one, drop
// one or swap two without the reader refusing the rest of the session.
// docs/protocol-agent.md has the layout.

// MACLen is the size of a sealed frame's MAC.
const MACLen = 16

// ErrBadMAC is a sealed frame that was altered, replayed or reordered.
var ErrBadMAC = errors.New("a frame failed its integrity check (altered, replayed or reordered in flight)")

// sealer signs what one end sends and checks what it receives.
type sealer struct {
	sendKey, recvKey []byte
	sendSeq, recvSeq uint64
}

// newSealer is the agent's (agent true) or the controller's sealer for
// an authenticated session: the controller is the session's client.
func newSealer(s *auth.Session, agent bool) *sealer {
	c, a := s.FrameKey("client"), s.FrameKey("server")
	if agent {
		return &sealer{sendKey: a, recvKey: c}
	}
	return &sealer{sendKey: c, recvKey: a}
}

func frameMAC(key []byte, seq uint64, t Type, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	var h [9]byte
	binary.BigEndian.PutUint64(h[:8], seq)
	h[8] = byte(t)
	m.Write(h[:])
	m.Write(body)
	return m.Sum(nil)[:MACLen]
}

// sealedFraming is the agent's framing with room for the MAC.
var sealedFraming = proto.Framing{MaxBody: func(t uint8) (int, bool) {
	most, ok := framing.MaxBody(t)
	return most + MACLen, ok
}}

// write sends one sealed frame.
func (s *sealer) write(w io.Writer, t Type, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %v: %w", t, err)
	}
	if most := t.maxLen(); len(js) > most {
		return fmt.Errorf("encoding %v: %w: %d bytes (at most %d)", t, ErrTooBig, len(js), most)
	}
	buf := make([]byte, 5, 5+len(js)+MACLen)
	binary.BigEndian.PutUint32(buf[:4], uint32(1+len(js)+MACLen))
	buf[4] = byte(t)
	buf = append(buf, js...)
	buf = append(buf, frameMAC(s.sendKey, s.sendSeq, t, js)...)
	s.sendSeq++
	_, err = w.Write(buf)
	return err
}

// read reads one sealed frame and checks its MAC; after a failure the
// session is over (its sequence can't be trusted).
func (s *sealer) read(r io.Reader, admit func(Type) error) (Frame, error) {
	var check func(uint8) error
	if admit != nil {
		check = func(t uint8) error { return admit(Type(t)) }
	}
	t, body, err := sealedFraming.Read(r, check)
	if err != nil {
		return Frame{Type: Type(t)}, err
	}
	if len(body) < MACLen {
		return Frame{}, ErrBadMAC
	}
	js, mac := body[:len(body)-MACLen], body[len(body)-MACLen:]
	if !hmac.Equal(mac, frameMAC(s.recvKey, s.recvSeq, Type(t), js)) {
		return Frame{}, ErrBadMAC
	}
	s.recvSeq++
	return Frame{Type: Type(t), Body: js}, nil
}
