package figures

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

func TestAttributeUDPLoss(t *testing.T) {
	tests := []struct {
		name       string
		lost       int64
		sendErrors int64
		recv, send *result.SNMP
		concurrent int
		want       UDPLoss // Verdict left out: checked by wantVerdict
		// wantVerdict is the whole verdict when exact, else substrings.
		exact       string
		wantVerdict []string
		notWant     []string
	}{
		{
			name:  "no loss",
			recv:  &result.SNMP{},
			send:  &result.SNMP{},
			exact: "no datagrams were lost",
		},
		{
			name:  "no loss, other traffic dropped on the host",
			recv:  &result.SNMP{RcvbufErrors: 40, InErrors: 40},
			want:  UDPLoss{ReceiverRcvbuf: 40, ReceiverInErrors: 40, Approximate: true},
			exact: "no datagrams were lost",
		},
		{
			name:  "all in the receiver's socket buffer",
			lost:  8120,
			recv:  &result.SNMP{RcvbufErrors: 8120, InErrors: 8120},
			send:  &result.SNMP{},
			want:  UDPLoss{Lost: 8120, ReceiverRcvbuf: 8120, ReceiverInErrors: 8120},
			exact: "of 8,120 lost datagrams, 8,120 were dropped by the receiving host's socket buffer (RcvbufErrors): raise -w or the receiver's net.core.rmem_max",
		},
		{
			name:  "all in the network",
			lost:  1000,
			recv:  &result.SNMP{InDatagrams: 99000},
			send:  &result.SNMP{OutDatagrams: 100000},
			want:  UDPLoss{Lost: 1000, Network: 1000},
			exact: "of 1,000 lost datagrams, none is explained by either host's counters: neither host counted a drop",
		},
		{
			name:  "split between receiver and network",
			lost:  5000,
			recv:  &result.SNMP{RcvbufErrors: 3000, InErrors: 3000},
			send:  &result.SNMP{},
			want:  UDPLoss{Lost: 5000, ReceiverRcvbuf: 3000, ReceiverInErrors: 3000, Network: 2000},
			exact: "of 5,000 lost datagrams, 3,000 were dropped by the receiving host's socket buffer (RcvbufErrors) and 2,000 are not explained by either host's counters; raise -w or the receiver's net.core.rmem_max",
		},
		{
			name:  "all at the sender",
			lost:  400,
			recv:  &result.SNMP{},
			send:  &result.SNMP{SndbufErrors: 400},
			want:  UDPLoss{Lost: 400, SenderSndbuf: 400},
			exact: "of 400 lost datagrams, the sending host dropped 400 (SndbufErrors/ENOBUFS): the sender outran its own socket buffer or NIC queue",
		},
		{
			// The sender saw 250 refusals and sent those again; only the
			// other 50 the kernel counted were dropped after acceptance.
			name:       "refused sends are sent again, not lost",
			lost:       400,
			sendErrors: 250,
			recv:       &result.SNMP{},
			send:       &result.SNMP{SndbufErrors: 300},
			want:       UDPLoss{Lost: 400, SenderSndbuf: 300, SendErrors: 250, Network: 350},
			exact: "of 400 lost datagrams, the sending host dropped 50 (SndbufErrors/ENOBUFS) and 350 are not explained by either host's counters; " +
				"the sender outran its own socket buffer or NIC queue",
		},
		{
			name:       "only refused sends: nothing lost at the sender",
			lost:       100,
			sendErrors: 900,
			recv:       &result.SNMP{},
			send:       &result.SNMP{SndbufErrors: 900},
			want:       UDPLoss{Lost: 100, SenderSndbuf: 900, SendErrors: 900, Network: 100},
			exact:      "of 100 lost datagrams, none is explained by either host's counters: neither host counted a drop",
		},
		{
			name:       "sender without counters",
			lost:       400,
			sendErrors: 400,
			recv:       &result.SNMP{},
			want:       UDPLoss{Lost: 400, SendErrors: 400, Network: 400},
			exact:      "of 400 lost datagrams, none is explained by the receiving host's counters, and the sending host has no UDP counters",
		},
		{
			name: "receiver, network and sender",
			lost: 5000,
			recv: &result.SNMP{RcvbufErrors: 3000, InErrors: 3000},
			send: &result.SNMP{SndbufErrors: 400},
			want: UDPLoss{Lost: 5000, ReceiverRcvbuf: 3000, ReceiverInErrors: 3000, SenderSndbuf: 400, Network: 1600},
			exact: "of 5,000 lost datagrams, 3,000 were dropped by the receiving host's socket buffer (RcvbufErrors), the sending host dropped 400 (SndbufErrors/ENOBUFS), " +
				"and 1,600 are not explained by either host's counters; raise -w or the receiver's net.core.rmem_max; the sender outran its own socket buffer or NIC queue",
		},
		{
			name:        "other receive errors",
			lost:        1200,
			recv:        &result.SNMP{RcvbufErrors: 1000, InErrors: 1150, InCsumErrors: 150},
			send:        &result.SNMP{},
			want:        UDPLoss{Lost: 1200, ReceiverRcvbuf: 1000, ReceiverInErrors: 1150, Network: 50},
			wantVerdict: []string{"1,000 were dropped by the receiving host's socket buffer (RcvbufErrors), 150 were dropped by the receiving host for other reasons", ", and 50 are not explained by either host's counters;"},
			notWant:     []string{"approximate"},
		},
		{
			name:        "host counted more than was lost",
			lost:        1000,
			recv:        &result.SNMP{RcvbufErrors: 2500, InErrors: 2500},
			send:        &result.SNMP{},
			want:        UDPLoss{Lost: 1000, ReceiverRcvbuf: 2500, ReceiverInErrors: 2500, Approximate: true},
			wantVerdict: []string{"of 1,000 lost datagrams, 1,000 were dropped by the receiving host's socket buffer (RcvbufErrors): raise -w", "(approximate: the hosts' UDP counters are host-wide and counted 2,500 drops, more than this test lost"},
		},
		{
			name:        "other tests at the same time",
			lost:        2000,
			recv:        &result.SNMP{RcvbufErrors: 500, InErrors: 500},
			send:        &result.SNMP{},
			concurrent:  2,
			want:        UDPLoss{Lost: 2000, ReceiverRcvbuf: 500, ReceiverInErrors: 500, Network: 1500, Approximate: true},
			wantVerdict: []string{"500 were dropped by the receiving host's socket buffer (RcvbufErrors) and 1,500 are not explained by either host's counters", "(approximate: the hosts' UDP counters are host-wide and 2 other tests ran at the same time)"},
		},
		{
			name:        "one other test",
			lost:        10,
			recv:        &result.SNMP{},
			send:        &result.SNMP{},
			concurrent:  1,
			want:        UDPLoss{Lost: 10, Network: 10, Approximate: true},
			wantVerdict: []string{"neither host counted a drop (approximate: the hosts' UDP counters are host-wide and 1 other test ran at the same time)"},
		},
		{
			name:  "no counters at all",
			lost:  1234567,
			want:  UDPLoss{Lost: 1234567, Network: 1234567},
			exact: "of 1,234,567 lost datagrams, where they were dropped is unknown: the receiving host has no UDP counters to tell its drops from any other loss",
		},
		{
			name:        "receiver without counters, sender dropped some",
			lost:        1000,
			sendErrors:  100,
			send:        &result.SNMP{SndbufErrors: 200},
			want:        UDPLoss{Lost: 1000, SenderSndbuf: 200, SendErrors: 100, Network: 900},
			wantVerdict: []string{"of 1,000 lost datagrams, the sending host dropped 100 (SndbufErrors/ENOBUFS) and 900 are not explained by the counters there are (the receiving host has no UDP counters)"},
		},
		{
			name:  "negative input",
			lost:  -5,
			want:  UDPLoss{},
			exact: "no datagrams were lost",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AttributeUDPLoss(tt.lost, tt.sendErrors, tt.recv, tt.send, tt.concurrent, 0)
			verdict := got.Verdict
			got.Verdict = ""
			if got != tt.want {
				t.Errorf("attribution %+v; want %+v", got, tt.want)
			}
			if got.Network < 0 || got.Network > got.Lost {
				t.Errorf("network %d outside 0..%d", got.Network, got.Lost)
			}
			if tt.exact != "" && verdict != tt.exact {
				t.Errorf("verdict\n%q; want\n%q", verdict, tt.exact)
			}
			for _, w := range tt.wantVerdict {
				if !strings.Contains(verdict, w) {
					t.Errorf("verdict %q lacks %q", verdict, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(verdict, w) {
					t.Errorf("verdict %q has %q", verdict, w)
				}
			}
			if strings.Contains(verdict, "\n") {
				t.Errorf("verdict %q is not one line", verdict)
			}
			// No counter sees the path: what the hosts' counters do not
			// explain is never put down to "the network" (on loopback
			// there is none).
			if strings.Contains(verdict, "network") {
				t.Errorf("verdict %q blames the network", verdict)
			}
		})
	}
}

// Only other receive errors: no hint, and no index out of range.
func TestUDPLossOtherErrorsOnly(t *testing.T) {
	got := AttributeUDPLoss(10, 0, &result.SNMP{InErrors: 10}, &result.SNMP{}, 0, 0)
	if !strings.Contains(got.Verdict, "10 were dropped by the receiving host for other reasons") {
		t.Errorf("verdict %q", got.Verdict)
	}
}

// Under GSO a receiving host counts one drop per batch of datagrams.
func TestAttributeUDPLossGSOBatches(t *testing.T) {
	got := AttributeUDPLoss(676, 0, &result.SNMP{RcvbufErrors: 52, InErrors: 52}, &result.SNMP{}, 0, 13)
	if got.Network != 0 {
		t.Errorf("network %d, want 0: 52 batches of 13 datagrams explain all 676", got.Network)
	}
	if !strings.Contains(got.Verdict, "676 were dropped by the receiving host's socket buffer") {
		t.Errorf("verdict %q", got.Verdict)
	}
}
