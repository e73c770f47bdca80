package measure

import (
	"strings"
	"testing"
)

// -m and --mptcp put MPTCP in the spec; a UDP test refuses it, as iperf3
// makes -m a TCP test's.
func TestMPTCPFlag(t *testing.T) {
	for _, flag := range []string{"-m", "--mptcp"} {
		if c := parseClient(t, flag); !c.Spec.MPTCP {
			t.Errorf("%s: MPTCP not in the spec", flag)
		}
	}
	if c := parseClient(t); c.Spec.MPTCP {
		t.Error("MPTCP without -m")
	}
	if _, _, err := Parse(KindClient, strings.Fields("-u -m")); err == nil || !strings.Contains(err.Error(), "MPTCP applies to TCP") {
		t.Errorf("-u -m: %v, want a refusal", err)
	}
}
