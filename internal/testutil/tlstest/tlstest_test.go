package tlstest

import (
	"crypto/x509"
	"net"
	"testing"
)

func TestSelfSignedVerifiesForLoopback(t *testing.T) {
	_, parsed := SelfSigned(t)
	if _, err := parsed.Verify(x509.VerifyOptions{Roots: Pool(parsed), DNSName: "127.0.0.1"}); err != nil {
		t.Fatalf("the certificate does not verify for 127.0.0.1 against its own pool: %v", err)
	}
	if !parsed.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("addresses %v", parsed.IPAddresses)
	}
}
