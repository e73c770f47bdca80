package lab

import (
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

func TestSendersTopology(t *testing.T) {
	topo, err := Senders(3, 300e6, 1500, nil, impair.Config{}, impair.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(topo.Hosts, " "); got != "a1 a2 a3 s r b" {
		t.Fatalf("hosts %s", got)
	}
	for i, lk := range topo.Links[:3] {
		if lk.A != SenderName(i+1) || lk.B != "s" || lk.Shape == nil || lk.Shape.On != lk.A || len(lk.Shapes) != 1 || lk.Shapes[0].On != "s" {
			t.Fatalf("access link %d: %+v", i, lk)
		}
		// A whole GSO packet fits the sender's bucket, so tbf does not
		// cut it into wire packets for the router to carry one by one.
		if lk.Shape.withDefaults(1500).Burst < 64<<10+14 {
			t.Errorf("access link %d: burst %d bytes, less than a GSO packet", i, lk.Shape.Burst)
		}
	}
	if r := topo.Router; r == nil || r.Host != "r" || r.A != "s" || r.B != "b" {
		t.Fatalf("router %+v", topo.Router)
	}
	// r reaches each access link's /24 through s; s sends the rest to r.
	var routes []string
	for _, rt := range topo.Routes {
		routes = append(routes, rt.Host+":"+rt.To.String()+">"+rt.Via)
	}
	if got := strings.Join(routes, " "); got != "r:10.77.1.0/24>s r:10.77.2.0/24>s r:10.77.3.0/24>s s:0.0.0.0/0>r" {
		t.Fatalf("routes %s", got)
	}
	plain, err := Senders(2, 0, 0, nil, impair.Config{}, impair.Config{})
	if err != nil || plain.Links[0].Shape != nil || plain.Links[0].Shapes != nil {
		t.Fatalf("uncapped access links: %+v, %v", plain.Links[0], err)
	}
	for _, n := range []int{0, MaxSenders + 1} {
		if _, err := Senders(n, 0, 0, nil, impair.Config{}, impair.Config{}); err == nil {
			t.Errorf("%d senders accepted", n)
		}
	}
}

func TestValidateRefusesARouteOffTheLinks(t *testing.T) {
	topo, _ := Senders(1, 0, 0, nil, impair.Config{}, impair.Config{})
	topo.Routes[0].Via = "b" // r has a link to b, but a1 has none to r
	topo.Routes[0].Host = "a1"
	if err := topo.Validate(); err == nil || !strings.Contains(err.Error(), "route in a1") {
		t.Fatalf("err = %v", err)
	}
	topo, _ = Senders(1, 1e6, 0, nil, impair.Config{}, impair.Config{})
	topo.Links[0].Shapes[0].On = "b"
	if err := topo.Validate(); err == nil {
		t.Fatal("a shape on a host off the link accepted")
	}
}
