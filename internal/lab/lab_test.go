package lab

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab/impair"
)

func TestTCPGoodputArithmetic(t *testing.T) {
	cases := []struct {
		rate    float64
		mtu     int
		framing Framing
		want    float64
	}{
		{1e9, 1500, FramingEthernet, 1e9 * 1448 / 1538}, // 941 Mbit/s, docs/metrics.md
		{1e9, 9000, FramingEthernet, 1e9 * 8948 / 9038}, // 990 Mbit/s
		{1e9, 1500, FramingTC, 1e9 * 1448 / 1514},       // what tbf/htb allow
		{1e9, 9000, FramingTC, 1e9 * 8948 / 9014},
		{1e9, 1500, FramingIP, 1e9 * 1448 / 1500},
		{1e9, 40, FramingTC, 0},
	}
	for _, c := range cases {
		if got := TCPGoodput(c.rate, c.mtu, c.framing); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("TCPGoodput(%v, %d, %s) = %v, want %v", c.rate, c.mtu, c.framing.Name, got, c.want)
		}
	}
	if got := TCPGoodput(1e9, 1500, FramingEthernet); math.Round(got/1e6) != 941 {
		t.Errorf("1 Gbit/s Ethernet: %v", got)
	}
	if got := Goodput(1e9, 1500, 28, FramingEthernet); math.Abs(got-1e9*1472/1538) > 1e-6 {
		t.Errorf("UDP goodput %v", got)
	}
}

func TestTopologyValidate(t *testing.T) {
	good := Chain(9000, BigTCPBuffers())
	good.Links[1].Shape = &Shape{On: "r", Rate: 1e9, Qdisc: "htb", Match: &Match{Proto: 6, DstPort: 5201}}
	good.Router = &RouterSpec{Host: "r", A: "a", B: "b", AtoB: impair.Config{Delay: time.Millisecond}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*Topology){
		"no hosts":          func(tp *Topology) { tp.Hosts = nil },
		"bad name":          func(tp *Topology) { tp.Hosts[0] = "A-1" },
		"dup host":          func(tp *Topology) { tp.Hosts = append(tp.Hosts, "a") },
		"link to nowhere":   func(tp *Topology) { tp.Links[0].B = "z" },
		"self link":         func(tp *Topology) { tp.Links[0].B = "a" },
		"two links":         func(tp *Topology) { tp.Links = append(tp.Links, Link{A: "r", B: "a"}) },
		"mtu":               func(tp *Topology) { tp.Links[0].MTU = 100 },
		"shape off link":    func(tp *Topology) { tp.Links[1].Shape.On = "a" },
		"qdisc":             func(tp *Topology) { tp.Links[1].Shape.Qdisc = "netem" },
		"rate":              func(tp *Topology) { tp.Links[1].Shape.Rate = 0 },
		"match needs htb":   func(tp *Topology) { tp.Links[1].Shape.Qdisc = "tbf" },
		"router not fw":     func(tp *Topology) { tp.Forwarders = nil },
		"router no link":    func(tp *Topology) { tp.Router.A = "r" },
		"router bad cfg":    func(tp *Topology) { tp.Router.AtoB.Loss = 2 },
		"unknown forwarder": func(tp *Topology) { tp.Forwarders = append(tp.Forwarders, "q") },
	}
	for name, mutate := range bad {
		tp := Chain(9000, nil)
		tp.Links[1].Shape = &Shape{On: "r", Rate: 1e9, Qdisc: "htb", Match: &Match{Proto: 6}}
		tp.Router = &RouterSpec{Host: "r", A: "a", B: "b"}
		mutate(&tp)
		if err := tp.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestShapeDefaults(t *testing.T) {
	s := Shape{Rate: 1e9}.withDefaults(1500)
	if s.Qdisc != "tbf" || s.Burst != 125000 || s.Limit != 2500000 {
		t.Errorf("1 Gbit/s defaults: %+v", s)
	}
	s = Shape{Rate: 1e6}.withDefaults(9000)
	if s.Burst != 2*9014 || s.Limit != 64<<10 {
		t.Errorf("1 Mbit/s defaults: %+v", s)
	}
}

const tcOutput = `qdisc htb 1: root refcnt 2 r2q 10 default 0x20 direct_packets_stat 0 direct_qlen 1000
 Sent 1443154278 bytes 956043 pkt (dropped 3, overlimits 24841 requeues 0) 
 backlog 0b 0p requeues 0
qdisc bfifo 10: parent 1:10 limit 2500000b
 Sent 26019876 bytes 17190 pkt (dropped 3, overlimits 0 requeues 1) 
 backlog 12Kb 8p requeues 1
qdisc tbf 8001: root refcnt 2 rate 1Gbit burst 125000b lat 7ms 
 Sent 628160484 bytes 414906 pkt (dropped 17, overlimits 9 requeues 2) 
 backlog 1.5Mb 1000p requeues 2
`

func TestParseQdiscStats(t *testing.T) {
	qs, err := ParseQdiscStats(tcOutput)
	if err != nil {
		t.Fatal(err)
	}
	want := []QdiscStats{
		{Kind: "htb", Handle: "1:", Parent: "root", SentBytes: 1443154278, SentPackets: 956043, Dropped: 3, Overlimits: 24841},
		{Kind: "bfifo", Handle: "10:", Parent: "1:10", SentBytes: 26019876, SentPackets: 17190, Dropped: 3, Requeues: 1, BacklogBytes: 12 << 10, BacklogPackets: 8},
		{Kind: "tbf", Handle: "8001:", Parent: "root", SentBytes: 628160484, SentPackets: 414906, Dropped: 17, Overlimits: 9, Requeues: 2, BacklogBytes: 1.5 * (1 << 20), BacklogPackets: 1000},
	}
	if len(qs) != len(want) {
		t.Fatalf("got %d qdiscs: %+v", len(qs), qs)
	}
	for i := range want {
		if qs[i] != want[i] {
			t.Errorf("qdisc %d:\n got %+v\nwant %+v", i, qs[i], want[i])
		}
	}
	if r, ok := Root(qs); !ok || r.Kind != "htb" {
		t.Errorf("Root = %+v", r)
	}
	for _, bad := range []string{" Sent 1 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)", "qdisc tbf", "qdisc tbf 1: root\n Sent x bytes 1 pkt",
		"qdisc tbf 1: root\n backlog 1q 0p"} {
		if _, err := ParseQdiscStats(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParseQdiscStats(f *testing.F) {
	f.Add(tcOutput)
	f.Add("qdisc noqueue 0: root refcnt 2 \n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n backlog 0b 0p requeues 0\n")
	f.Add("qdisc pfifo_fast 0: parent :1 bands 3\n")
	f.Fuzz(func(t *testing.T, s string) {
		qs, err := ParseQdiscStats(s)
		if err != nil {
			return
		}
		n := 0
		for _, line := range strings.Split(s, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == "qdisc" {
				n++
			}
		}
		if len(qs) != n {
			t.Fatalf("%d qdisc lines but %d results", n, len(qs))
		}
		for _, q := range qs {
			if q.Kind == "" || q.Handle == "" || q.Parent == "" {
				t.Fatalf("incomplete qdisc %+v", q)
			}
		}
	})
}

func TestParseLinkStats(t *testing.T) {
	js := `[{"ifindex":3,"ifname":"imp-a","mtu":1500,"stats64":{"rx":{"bytes":10,"packets":1,"errors":2,"dropped":3,"over_errors":0,"multicast":0},"tx":{"bytes":20,"packets":4,"errors":5,"dropped":6,"carrier_errors":0,"collisions":0}}}]`
	s, err := ParseLinkStats([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if s != (LinkStats{RxBytes: 10, RxPackets: 1, RxErrors: 2, RxDropped: 3, TxBytes: 20, TxPackets: 4, TxErrors: 5, TxDropped: 6}) {
		t.Errorf("%+v", s)
	}
	for _, bad := range []string{"", "[]", `[{"ifname":"x"}]`, "{"} {
		if _, err := ParseLinkStats([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseSNMP(t *testing.T) {
	text := "Ip: Forwarding DefaultTTL\nIp: 1 64\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\nUdp: 10 1 2 30 4 0 0 0 0\n"
	m, err := parseSNMP(text, "Udp")
	if err != nil || m["RcvbufErrors"] != 4 || m["InDatagrams"] != 10 {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := parseSNMP(text, "Tcp"); err == nil {
		t.Error("missing protocol accepted")
	}
}

func TestConfigDirections(t *testing.T) {
	c := Config{RTT: 215 * time.Millisecond, Rate: 1e9, Loss: 0.001, Reorder: 0.005, Jitter: time.Millisecond}
	ab, ba := c.Directions()
	if ab.Delay != 107500*time.Microsecond || ab.Rate != 1e9 || ab.Overhead != 38 || ab.Loss != 0.001 ||
		ab.Reorder != 0.005 || !ab.KeepOrder || ab.QueueLimit != 6250000 || ab != ba {
		t.Errorf("directions: %+v / %+v", ab, ba)
	}
	over := impair.Config{Loss: 0.5}
	c.BtoA = &over
	if _, ba := c.Directions(); ba != over {
		t.Errorf("override ignored: %+v", ba)
	}
	if err := checkName("ok-1"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "-x", "UP", "a/b", strings.Repeat("x", 21)} {
		if checkName(bad) == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
}
