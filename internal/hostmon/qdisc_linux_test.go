package hostmon

import (
	"net/netip"
	"testing"
)

// BenchmarkReadRootQdisc is what each end spends on its qdisc at a test's
// start and end: the interfaces' addresses, then one qdisc dump.
func BenchmarkReadRootQdisc(b *testing.B) {
	lo := netip.MustParseAddr("127.0.0.1")
	for b.Loop() {
		if _, err := ReadRootQdisc(lo); err != nil {
			b.Fatal(err)
		}
	}
}
