package measure

import (
	"strings"
	"testing"
	"time"
)

// Test lines of the probes: their flags read into their configs, a
// tcp-connect line names its port, -4 and -6 exclude each other.
func TestProbeLines(t *testing.T) {
	p, _, err := ParseLineText("ping --count 20 --interval 100ms --size 1400 -6")
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindPing || p.Ping == nil || p.Ping.Cfg.Count != 20 || p.Ping.Cfg.Interval != 100*time.Millisecond ||
		p.Ping.Cfg.Size != 1400 || p.Ping.Cfg.Family != "ip6" {
		t.Fatalf("ping line read as %+v", p.Ping)
	}
	if d, ok := p.Duration(); !ok || d != 19*100*time.Millisecond+2*time.Second {
		t.Fatalf("ping's duration %v %v: want 19 intervals and the 2 s timeout", d, ok)
	}
	c, _, err := ParseLineText("tcp-connect --tcp-port 443 --count 5 --timeout 1s")
	if err != nil {
		t.Fatal(err)
	}
	if c.TCPConnect == nil || c.TCPConnect.Port != 443 || c.TCPConnect.Cfg.Count != 5 {
		t.Fatalf("tcp-connect line read as %+v", c.TCPConnect)
	}
	if target, err := c.TCPConnect.Target("2001:db8::1"); err != nil || target != "[2001:db8::1]:443" {
		t.Fatalf("target %q, %v", target, err)
	}
	if _, err := c.TCPConnect.Target("host:80"); err == nil {
		t.Fatal("a port given twice was taken")
	}
	for line, want := range map[string]string{
		"tcp-connect --count 5":     "--tcp-port",
		"tcp-connect --tcp-port 0x": "--tcp-port",
		"ping -4 -6":                "-4 and -6",
		"ping --interval 1ms":       "--interval",
		"ping --port 5201":          "port",
	} {
		if _, _, err := ParseLineText(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", line, err, want)
		}
	}
}
