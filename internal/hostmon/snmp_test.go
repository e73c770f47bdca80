package hostmon

import (
	"strings"
	"testing"
)

// snmpFixture is /proc/net/snmp as Linux 6.x prints it (Tcp has a
// negative MaxConn, which we must not choke on since we skip Tcp).
const snmpFixture = `Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs ReasmFails FragOKs FragFails FragCreates OutTransmits
Ip: 2 64 314770 1 2 3 4 5 314760 292403 6 7 0 0 0 0 0 0 0 292403
Icmp: InMsgs InErrors InCsumErrors
Icmp: 1 0 0
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens
Tcp: 1 200 120000 -1 23
Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
Udp: 25 1 7 26 6 2 1 3 4
UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
UdpLite: 90 90 90 90 90 90 90 90 90
`

func TestParseSNMP(t *testing.T) {
	got, err := ParseSNMP([]byte(snmpFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := UDPCounters{InDatagrams: 25, NoPorts: 1, InErrors: 7, OutDatagrams: 26, RcvbufErrors: 6,
		SndbufErrors: 2, InCsumErrors: 1, IgnoredMulti: 3, MemErrors: 4}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseSNMPIP(t *testing.T) {
	got, err := ParseSNMPIP([]byte(snmpFixture))
	if err != nil {
		t.Fatal(err)
	}
	if got.InReceives != 314770 || got.InDiscards != 5 || got.InDelivers != 314760 ||
		got.OutDiscards != 6 || got.OutNoRoutes != 7 || got.OutTransmits != 292403 {
		t.Errorf("got %+v", got)
	}
}

func TestParseSNMPVersions(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want UDPCounters
	}{
		// A 3.x kernel: no IgnoredMulti or MemErrors yet; they stay zero.
		{"older kernel", "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors\nUdp: 1 2 3 4 5 6 7\n",
			UDPCounters{InDatagrams: 1, NoPorts: 2, InErrors: 3, OutDatagrams: 4, RcvbufErrors: 5, SndbufErrors: 6, InCsumErrors: 7}},
		// A future counter is ignored, and order follows the header.
		{"newer kernel", "Udp: NoPorts FutureThing InDatagrams\nUdp: 2 99 1\n", UDPCounters{InDatagrams: 1, NoPorts: 2}},
		{"no final newline", "Udp: InDatagrams\nUdp: 18446744073709551615", UDPCounters{InDatagrams: 1<<64 - 1}},
	}
	for _, tt := range tests {
		got, err := ParseSNMP([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestParseSNMPErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "no Udp: lines"},
		{"only UdpLite", "UdpLite: InDatagrams\nUdpLite: 1\n", "no Udp: lines"},
		{"missing header", "Udp: 1 2 3\n", "header line missing"},
		{"missing header, two value lines", "Udp: 1 2\nUdp: 3 4\n", "header line missing"},
		{"missing values", "Udp: InDatagrams NoPorts\n", "value line missing"},
		{"extra column", "Udp: InDatagrams NoPorts\nUdp: 1 2 3\n", "2 names but 3 values"},
		{"missing column", "Udp: InDatagrams NoPorts\nUdp: 1\n", "2 names but 1 values"},
		{"overflow", "Udp: InDatagrams\nUdp: 18446744073709551616\n", "out of range"},
		{"negative", "Udp: InDatagrams\nUdp: -1\n", "invalid syntax"},
		{"three lines", "Udp: InDatagrams\nUdp: 1\nUdp: 2\n", "3 Udp: lines"},
		{"duplicate name", "Udp: InDatagrams InDatagrams\nUdp: 1 2\n", "twice"},
	}
	for _, tt := range tests {
		_, err := ParseSNMP([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestUDPCountersSub(t *testing.T) {
	a := UDPCounters{InDatagrams: 10, RcvbufErrors: 5, MemErrors: 1}
	b := UDPCounters{InDatagrams: 4, RcvbufErrors: 5, MemErrors: 2}
	want := UDPCounters{InDatagrams: 6, RcvbufErrors: 0, MemErrors: 0} // MemErrors saturates
	if got := a.Sub(b); got != want {
		t.Errorf("Sub = %+v, want %+v", got, want)
	}
	if a.InDatagrams != 10 {
		t.Error("Sub modified its receiver")
	}
	ipA, ipB := IPCounters{InDiscards: 3, OutTransmits: 1}, IPCounters{InDiscards: 1, OutTransmits: 2}
	if got := ipA.Sub(ipB); got != (IPCounters{InDiscards: 2}) {
		t.Errorf("IP Sub = %+v", got)
	}
}

const snmp6Fixture = `Ip6InReceives                   	100
Ip6InDiscards                   	2
Ip6OutForwDatagrams             	3
Icmp6InMsgs                     	0
Udp6InDatagrams                 	11
Udp6NoPorts                     	1
Udp6RcvbufErrors                	4
UdpLite6InDatagrams             	99
`

func TestParseSNMP6(t *testing.T) {
	udp, err := parseSNMP6([]byte(snmp6Fixture), "Udp6")
	if err != nil {
		t.Fatal(err)
	}
	if len(udp) != 3 || udp["InDatagrams"] != 11 || udp["NoPorts"] != 1 || udp["RcvbufErrors"] != 4 {
		t.Errorf("Udp6 = %v (UdpLite6 must not leak in)", udp)
	}
	ip, err := parseSNMP6([]byte(snmp6Fixture), "Ip6")
	if err != nil {
		t.Fatal(err)
	}
	var c IPCounters
	add(c.counters(), renameIP6(ip))
	if c.InReceives != 100 || c.InDiscards != 2 || c.ForwDatagrams != 3 {
		t.Errorf("Ip6 as IPCounters = %+v", c)
	}
	for _, bad := range []string{"Udp6InDatagrams\n", "Udp6InDatagrams 1 2\n", "Udp6InDatagrams x\n",
		"Udp6InDatagrams 18446744073709551616\n", "Udp6NoPorts 1\nUdp6NoPorts 2\n"} {
		if _, err := parseSNMP6([]byte(bad), "Udp6"); err == nil {
			t.Errorf("%q parsed without error", bad)
		}
	}
}

func FuzzParseSNMP(f *testing.F) {
	f.Add([]byte(snmpFixture))
	f.Add([]byte("Udp: InDatagrams\nUdp: 1\n"))
	f.Add([]byte("Udp: \nUdp: \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := ParseSNMP(data)
		if err != nil && u != (UDPCounters{}) {
			t.Fatalf("partial result %+v with error %v", u, err)
		}
		c, err := ParseSNMPIP(data)
		if err != nil && c != (IPCounters{}) {
			t.Fatalf("partial result %+v with error %v", c, err)
		}
	})
}

func FuzzParseSNMP6(f *testing.F) {
	f.Add([]byte(snmp6Fixture))
	f.Add([]byte("Udp6 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseSNMP6(data, "Udp6")
		if err != nil && m != nil {
			t.Fatalf("partial map %v with error %v", m, err)
		}
		for k := range m {
			if k == "" {
				t.Fatal("empty counter name")
			}
		}
	})
}
