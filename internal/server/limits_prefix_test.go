package server

import (
	"net"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/spec"
)

func TestClientPrefix(t *testing.T) {
	l := DefaultLimits()
	for addr, want := range map[string]string{
		"192.0.2.7":           "192.0.2.7",
		"2001:db8:1:2:3::9":   "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::": "2001:db8:1:2::/64",
		"::ffff:192.0.2.7":    "192.0.2.7",
	} {
		if got := l.clientOf(&net.TCPAddr{IP: net.ParseIP(addr)}); got != want {
			t.Errorf("clientOf(%s) = %s, want %s", addr, got, want)
		}
	}
	l.PrefixV4 = 24
	if got := l.clientOf(&net.TCPAddr{IP: net.ParseIP("192.0.2.7")}); got != "192.0.2.0/24" {
		t.Errorf("with /24: %s", got)
	}
}

// Server-wide budgets refuse with the limit's name; tests from one /64
// share the per-client limit.
func TestServerWideBudgets(t *testing.T) {
	s := spec.Default()
	s.Streams = 4
	s.Length = 1 << 20
	tests := []struct {
		limits func(*Limits)
		peers  []string
		want   string
	}{
		{func(l *Limits) { l.MaxMemory = 6 << 20 }, []string{"192.0.2.1", "192.0.2.2"}, "--max-memory"},
		{func(l *Limits) { l.MaxTotalStreams = 6 }, []string{"192.0.2.1", "192.0.2.2"}, "--max-total-streams"},
		{func(l *Limits) { l.MaxTestsPerClient = 1 }, []string{"2001:db8::1", "2001:db8::2"}, "1 test already running from 2001:db8::/64"},
	}
	for _, tt := range tests {
		l := DefaultLimits()
		tt.limits(&l)
		r := newRegistry(l, false, nil)
		var err error
		var frees []func()
		for _, p := range tt.peers {
			var free func()
			free, _, err = r.reserve(&net.TCPAddr{IP: net.ParseIP(p)}, s, false)
			if err != nil {
				break
			}
			frees = append(frees, free)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
		for _, f := range frees {
			f()
		}
		if r.memory != 0 || r.streams != 0 || r.slots != 0 {
			t.Errorf("after release: memory %d, streams %d, slots %d", r.memory, r.streams, r.slots)
		}
	}
}
