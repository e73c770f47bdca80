package main

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/lab"
	"github.com/wireperf/wireperf/internal/result"
)

func ptr(n int64) *int64 { return &n }

// The udpmon reproduction (1 ms / 1g, spacing 0): every lost
// datagram put down to the receiving socket while the router counted the
// drops fails; counts that add up to the loss and to the router's pass,
// GRO batches and an unexplained rest included.
func TestCheckUDPMon(t *testing.T) {
	type pt = udpmonPoint
	point := func(size int, lost int64, router, socket *int64, batches bool, network int64) pt {
		return pt{Size: size, Lost: lost, LossAttribution: &udpmonLoss{Network: network, ReceiverSocket: socket, SocketBatches: batches, Router: router}}
	}
	for _, c := range []struct {
		name  string
		pts   []pt
		drops int64
		fail  string
	}{
		{"the report's: all to the socket, router not counted", []pt{point(1472, 25754, nil, ptr(25754), false, 0)}, 28053, "not counted"},
		{"router counted, but not the lab's", []pt{point(1472, 25754, ptr(0), ptr(25754), false, 0)}, 28053, "add up to 0"},
		{"parts that do not add up", []pt{point(1472, 9163, ptr(8690), ptr(0), false, 0)}, 8690, "≠ lost 9163"},
		{"honest: the rest unexplained", []pt{point(1472, 9163, ptr(8690), ptr(0), false, 473)}, 8690, ""},
		{"GRO batches", []pt{point(1472, 7167, ptr(7167), ptr(0), true, 0), point(512, 7592, ptr(4260), ptr(1627), true, 1705)}, 11427, ""},
	} {
		doc := &udpmonDoc{}
		doc.Points = append(doc.Points, c.pts...)
		figs, fails := checkUDPMon(doc, c.drops)
		got := strings.Join(fails, "; ")
		if c.fail == "" && len(fails) > 0 || c.fail != "" && !strings.Contains(got, c.fail) {
			t.Errorf("%s: fails %q, want %q", c.name, got, c.fail)
		}
		if len(figs) == 0 && c.fail == "" {
			t.Errorf("%s: no figures", c.name)
		}
	}
}

// The rr --load reproduction (215 ms, 50 ms queue): a network
// RTT p99 of 546 ms passes only when its phase is flagged as a host's
// delay; an RTT under the path's floor never passes.
func TestCheckRR(t *testing.T) {
	floor, bound := 215*time.Millisecond, 265*time.Millisecond+400*time.Microsecond
	phase := func(label string, minUs, p99Us, maxUs float64) result.RRPoint {
		return result.RRPoint{Label: label, Sent: 100, Completed: 100,
			RTT:        result.Percentiles{Min: minUs + 50, P99: p99Us + 50, Max: maxUs + 50},
			NetworkRTT: result.Percentiles{Min: minUs, P99: p99Us, Max: maxUs}}
	}
	res := func(flag bool, pts ...result.RRPoint) *result.Result {
		r := &result.Result{}
		r.Local.RR = &result.RR{Points: pts, Load: &result.RRLoad{}}
		if flag {
			r.Local.RR.Load.HostDelays = []result.RRHostDelay{{Phase: "loaded", Host: result.RoleClient, AddedUs: 280e3}}
		}
		return r
	}
	idle, after := phase("idle", 215200, 216000, 217000), phase("after", 215200, 216500, 218000)
	loaded := phase("loaded", 215300, 546000, 619000)
	for _, c := range []struct {
		name string
		r    *result.Result
		fail string
	}{
		{"the report's, unflagged", res(false, idle, loaded, after), "loaded: network RTT p99 546.000 ms, above the path's bound"},
		{"flagged as the client's delay", res(true, idle, loaded, after), ""},
		{"below the floor", res(false, phase("idle", 210000, 216000, 217000)), "below the path's floor"},
		{"within the path", res(false, idle, phase("loaded", 215300, 262000, 265000), after), ""},
		{"a max the point's own flag names", res(false, idle, hostFlagged(phase("after", 215200, 216500, 330000), "max"), after), ""},
		{"a max flagged on p99 only", res(false, idle, hostFlagged(phase("after", 215200, 216500, 330000), "p99"), after), "after: network RTT max 330.000 ms"},
	} {
		_, _, fails := checkRR(c.r, floor, bound)
		got := strings.Join(fails, "; ")
		if c.fail == "" && len(fails) > 0 || c.fail != "" && !strings.Contains(got, c.fail) {
			t.Errorf("%s: fails %q, want %q", c.name, got, c.fail)
		}
	}
}

// hostFlagged is p with a host flag on its network RTT's figure.
func hostFlagged(p result.RRPoint, figure string) result.RRPoint {
	p.HostFlags = []result.RRHostFlag{{Figure: figure, Host: result.RoleClient, Transactions: 1, ShareUs: 100e3}}
	return p
}

// The advise reproduction (215 ms / 1g, bbr): a loss verdict and
// advice to hunt drops on a path without random loss whose steady state
// was full fails, as do "943 by line-rate arithmetic" and the sysctl's
// algorithm on the report's lines; "test too short" passes.
func TestCheckAdvise(t *testing.T) {
	capacity := lab.TCPGoodput(1e9, 1500, lab.FramingEthernet)
	doc := func(cc, limit string, ideal, steady float64, steps ...string) *adviseDoc {
		d := &adviseDoc{BottleneckBps: 1e9, IdealBps: ideal, PathMTU: 1500}
		d.Sender.Socket.Congestion = cc
		d.Single.GoodputBps = 777e6
		d.Single.Steady = &struct {
			RateBps float64 `json:"rate_bps"`
			Retrans int64   `json:"retrans_segments"`
		}{RateBps: steady, Retrans: 1163}
		d.Verdict.Limit = limit
		d.Advice.Steps = steps
		return d
	}
	for _, c := range []struct {
		name string
		d    *adviseDoc
		loss bool
		fail string
	}{
		{"the report's bbr verdict", doc("bbr", "congestion", capacity, 932e6, "find where the packets are lost: interface and qdisc drop counters along the path"), false, "verdict \"congestion\""},
		{"the same on a path with random loss", doc("bbr", "congestion", capacity, 932e6), true, ""},
		{"943 by arithmetic", doc("bbr", "network", 943e6, 932e6), false, "the arithmetic"},
		{"a measured bottleneck is its own ideal", func() *adviseDoc {
			d := doc("bbr", "network", 940.7e6, 932e6)
			d.BottleneckBps, d.BottleneckSource = 940.7e6, "measured"
			return d
		}(), false, ""},
		{"the sysctl's algorithm", doc("cubic", "network", capacity, 932e6), false, "names \"cubic\""},
		{"test too short", doc("bbr", "slow-start", capacity, 721e6), false, ""},
		{"window verdict on a full stream", func() *adviseDoc {
			d := doc("bbr", "receiver-window", capacity, 932e6)
			d.Single.GoodputBps = 930e6
			return d
		}(), false, "yet one stream reached"},
		// The hog at 215 ms: one stream and the bottleneck at 662.7.
		{"a full path on a bottleneck the host limited", func() *adviseDoc {
			d := doc("bbr", "network", 662.7e6, 662.7e6)
			d.BottleneckBps, d.BottleneckSource, d.BottleneckLowerBound = 662.7e6, "measured", "the sending host, not the path, set their pace"
			d.Single.GoodputBps = 662.7e6
			return d
		}(), false, "a lower bound"},
		{"unknown on a bottleneck the host limited", func() *adviseDoc {
			d := doc("bbr", "unknown", 662.7e6, 662.7e6)
			d.BottleneckBps, d.BottleneckSource, d.BottleneckLowerBound = 662.7e6, "measured", "the sending host, not the path, set their pace"
			d.Single.GoodputBps = 662.7e6
			return d
		}(), false, ""},
	} {
		got := strings.Join(checkAdvise(c.d, "bbr", capacity, c.loss), "; ")
		if c.fail == "" && got != "" || c.fail != "" && !strings.Contains(got, c.fail) {
			t.Errorf("%s: fails %q, want %q", c.name, got, c.fail)
		}
	}
}

func TestSelectedAndKeepPaths(t *testing.T) {
	if !selected("rr --load tcp,2", "") || !selected("rr --load tcp,2", "udpmon,rr") || selected("advise -C cubic", "rr,group") {
		t.Error("selected picks the wrong cells")
	}
	got := keepPaths(commandPaths, "215ms/1g,19ms/100m")
	if len(got) != 1 || got[0].rtt != "215ms" {
		t.Errorf("keepPaths = %v", got)
	}
}
