package hostmon

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestReadUDPWithoutIPv6(t *testing.T) {
	dir := t.TempDir()
	v4 := filepath.Join(dir, "snmp")
	if err := os.WriteFile(v4, []byte(snmpFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := readUDP(v4, filepath.Join(dir, "absent"))
	if err != nil || u.InDatagrams != 25 {
		t.Errorf("without snmp6: %+v, %v", u, err)
	}
	v6 := filepath.Join(dir, "snmp6")
	if err := os.WriteFile(v6, []byte(snmp6Fixture), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err = readUDP(v4, v6)
	if err != nil || u.InDatagrams != 25+11 || u.RcvbufErrors != 6+4 {
		t.Errorf("with snmp6 summed: %+v, %v", u, err)
	}
	ip, err := readIP(v4, v6)
	if err != nil || ip.InReceives != 314770+100 || ip.ForwDatagrams != 3+3 {
		t.Errorf("IP with snmp6 summed: %+v, %v", ip, err)
	}
}

// TestReadUDPLive sends datagrams over 127.0.0.1 and checks the host's
// counters moved by at least that much (other traffic can only add).
func TestReadUDPLive(t *testing.T) {
	const n = 10
	rx, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	tx, err := net.Dial("udp4", rx.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()

	before, err := ReadUDP()
	if err != nil {
		t.Fatal(err)
	}
	ipBefore, err := ReadIP()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	for range n {
		if _, err := tx.Write([]byte("wireperf")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := rx.ReadFrom(buf); err != nil { // delivered, so counted
			t.Fatal(err)
		}
	}
	after, err := ReadUDP()
	if err != nil {
		t.Fatal(err)
	}
	ipAfter, err := ReadIP()
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.OutDatagrams < n || d.InDatagrams < n {
		t.Errorf("UDP delta %+v, want at least %d out and in", d, n)
	}
	if ip := ipAfter.Sub(ipBefore); ip.InDelivers < n {
		t.Errorf("IP delta %+v, want InDelivers >= %d", ip, n)
	}
}
