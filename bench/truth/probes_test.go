package main

import (
	"strings"
	"testing"
	"time"
)

// /proc/net/snmp's layout: a line of names, then one of values, per group.
func TestSNMPField(t *testing.T) {
	const text = "Icmp: InMsgs InErrors InEchos\nIcmp: 120 0 100\nTcp: RtoAlgorithm PassiveOpens\nTcp: 1 37\n"
	if n, err := snmpField(text, "Icmp", "InEchos"); err != nil || n != 100 {
		t.Errorf("Icmp InEchos = %d, %v; want 100", n, err)
	}
	if n, err := snmpField(text, "Tcp", "PassiveOpens"); err != nil || n != 37 {
		t.Errorf("Tcp PassiveOpens = %d, %v; want 37", n, err)
	}
	if _, err := snmpField(text, "Udp", "InDatagrams"); err == nil {
		t.Error("a missing group read as a count")
	}
}

// ping and tcp-connect held to the router's and host b's counts: a loss
// the router did not drop, a duplicate it did not make, or a connect b's
// listener never completed fails; counts that agree pass.
func TestCheckProbes(t *testing.T) {
	ping := func(sent, received, dup int64) *probeDoc {
		d := &probeDoc{}
		d.Ping = &struct {
			Sent, Received, Duplicates int64
			RTT                        probeTimes `json:"rtt_us"`
		}{Sent: sent, Received: received, Duplicates: dup}
		return d
	}
	for _, c := range []struct {
		name                         string
		d                            *probeDoc
		routerIn, lost, dup, inEchos int64
		fail                         string
	}{
		{"clean", ping(100, 100, 0), 100, 0, 0, 100, ""},
		{"router's drops", ping(100, 97, 0), 100, 3, 0, 98, ""},
		{"a loss the router did not make", ping(100, 97, 0), 100, 0, 0, 100, "the router dropped 0"},
		{"a duplicate the router did not make", ping(100, 100, 2), 100, 0, 0, 100, "duplicated 0"},
		{"answers b never took", ping(100, 100, 0), 100, 0, 0, 90, "b's kernel took 90"},
	} {
		got := strings.Join(checkPing(c.d, c.routerIn, c.lost, c.dup, c.inEchos), "; ")
		if c.fail == "" && got != "" || c.fail != "" && !strings.Contains(got, c.fail) {
			t.Errorf("%s: %q, want %q", c.name, got, c.fail)
		}
	}
	conn := &probeDoc{}
	conn.Connect = &connectDoc{Attempts: 100, Connected: 100}
	if f := checkConnect(conn, 100); len(f) > 0 {
		t.Errorf("agreeing counts fail: %v", f)
	}
	if f := strings.Join(checkConnect(conn, 96), "; "); !strings.Contains(f, "completed 96") {
		t.Errorf("4 connects b never completed pass: %q", f)
	}
	// A dial above the bound passes only with the client flagged for it,
	// and the dials it did not delay within the bound.
	bound := 124 * time.Millisecond
	conn.Connect.UserSpace = probeTimes{Count: 100, Min: 19_500, Max: 224_900}
	if f := strings.Join(checkConnectHost(conn.Connect, bound), "; "); !strings.Contains(f, "no host flagged") {
		t.Errorf("an unflagged dial above the bound passes: %q", f)
	}
	without := 130_000.0
	conn.Connect.HostDelay = &struct {
		Host      string
		Attempts  int64
		UserMaxUs float64  `json:"user_max_us"`
		WithoutUs *float64 `json:"without_host_delayed_us"`
	}{Host: "client", Attempts: 2, UserMaxUs: 224_900, WithoutUs: &without}
	if f := strings.Join(checkConnectHost(conn.Connect, bound), "; "); !strings.Contains(f, "without the host-delayed dials") {
		t.Errorf("unflagged dials above the bound pass: %q", f)
	}
	without = 21_000
	if f := checkConnectHost(conn.Connect, bound); len(f) > 0 {
		t.Errorf("a flagged host delay fails: %v", f)
	}
	conn.Connect.HostDelay.UserMaxUs = 60_000
	if f := checkConnectHost(conn.Connect, bound); len(f) == 0 {
		t.Error("a flag for another figure than the max passes")
	}
	// Times below the floor or above the bound.
	times := probeTimes{Count: 3, Min: 18_000, Max: 140_000}
	f := strings.Join(checkProbeTimes("ping", times, 19*time.Millisecond, 139*time.Millisecond), "; ")
	if !strings.Contains(f, "below the path's floor") || !strings.Contains(f, "above the path's bound") {
		t.Errorf("times off the path pass: %q", f)
	}
}
