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

func (s *Signer) compute(b []byte) []byte {
	s.mac.Reset()
	s.mac.Write(b[:HeaderLen])
	return s.mac.Sum(s.sum[:0])[:MACLen]
}

// Sign marks the header at the start of b as signed and writes its MAC
// after it; b must hold SignedHeaderLen bytes. Call it after the last
// change to the header.
func (s *Signer) Sign(b []byte) {
	_ = b[SignedHeaderLen-1]
	b[3] |= flagMAC
	copy(b[HeaderLen:SignedHeaderLen], s.compute(b))
}

// Verify says whether b starts with a signed header whose MAC is right.
func (s *Signer) Verify(b []byte) bool {
	if len(b) < SignedHeaderLen || b[3]&flagMAC == 0 {
		return false
	}
	return hmac.Equal(s.compute(b), b[HeaderLen:SignedHeaderLen])
}
