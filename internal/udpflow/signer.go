package udpflow

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
)

// MACLen is the size of the MAC that follows the header of a signed
// datagram: HMAC-SHA256 truncated to 128 bits, as forging one takes 2^128
// tries on average, against one test.
const MACLen = 16

// SignedHeaderLen is the header of a signed datagram, MAC included.
const SignedHeaderLen = HeaderLen + MACLen

// Signer signs datagram headers with a test's key (auth.Session's
// DatagramKey), and checks them. The MAC covers the header, flags
// included: the token, stream, sequence number and send time are what
// the receiver counts, so nobody without the key can make it count
// anything. The filler after it is not covered. A Signer is used by one
// goroutine.
type Signer struct {
	mac hash.Hash
	sum [sha256.Size]byte
}

// NewSigner returns a signer for key; nil for no key (datagrams go
// unsigned).
func NewSigner(key []byte) *Signer {
	if len(key) == 0 {
		return nil
	}
	return &Signer{mac: hmac.New(sha256.New, key)}
}

func (s *Signer) compute(b []byte, hl int) []byte {
	s.mac.Reset()
	s.mac.Write(b[:hl])
	return s.mac.Sum(s.sum[:0])[:MACLen]
}

// Sign marks the header at the start of b as signed and writes its MAC
// after it (after the frame fields of an isochronous datagram, which it
// covers); b must hold the header and the MAC. Call it after the last
// change to the header.
func (s *Signer) Sign(b []byte) {
	b[3] |= flagMAC
	hl := headerLen(b)
	_ = b[hl+MACLen-1]
	copy(b[hl:hl+MACLen], s.compute(b, hl))
}

// Verify says whether b starts with a signed header whose MAC is right.
func (s *Signer) Verify(b []byte) bool {
	hl := headerLen(b)
	if len(b) < hl+MACLen || b[3]&flagMAC == 0 {
		return false
	}
	return hmac.Equal(s.compute(b, hl), b[hl:hl+MACLen])
}
