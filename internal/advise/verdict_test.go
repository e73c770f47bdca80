package advise

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// linuxHost is a Linux host with the given autotuning maxima.
func linuxHost(role, addr string, rmemMax, wmemMax int64) Host {
	return Host{Role: role, Address: addr, System: "Linux host 6.18 x86_64", Limits: &result.Limits{
		RmemMax: 4194304, WmemMax: 4194304,
		TCPRmem: [3]int64{4096, 131072, rmemMax}, TCPWmem: [3]int64{4096, 16384, wmemMax},
	}}
}

// tcp builds a run's TCP figures.
type tcpOpt func(*figures.DirectionFigures)

func measured(goodput float64, secs float64, opts ...tcpOpt) Measurement {
	d := &figures.DirectionFigures{Streams: 1, GoodputBps: goodput}
	d.BaselineRTTus = 215000
	d.Limited = &figures.LimitedTime{BusyUs: uint64(secs * 1e6), Network: 1}
	d.SlowStart = &figures.SlowStartFigures{Ended: true, End: 0.2, Share: 0.2 / secs, Duration: secs}
	for _, o := range opts {
		o(d)
	}
	return Measurement{Streams: 1, Seconds: secs, GoodputBps: goodput, TCP: d}
}

func shares(rwnd, sndbuf float64) tcpOpt {
	return func(d *figures.DirectionFigures) {
		d.Limited.Rwnd, d.Limited.Sndbuf, d.Limited.Network = rwnd, sndbuf, 1-rwnd-sndbuf
	}
}

func window(w uint64, plateau bool) tcpOpt {
	return func(d *figures.DirectionFigures) { d.MaxSndWnd, d.WindowPlateau = w, &plateau }
}

func slowStart(end float64, ended bool) tcpOpt {
	return func(d *figures.DirectionFigures) {
		ss := d.SlowStart
		ss.Ended, ss.End = ended, end
		ss.Share = 1
		if ended {
			ss.Share = end / ss.Duration
		}
		ss.RateBefore, ss.RateAfter = 70e6, 540e6
	}
}

func losses(retrans int64, reductions int, bytesSent, bytesRetrans uint64) tcpOpt {
	return func(d *figures.DirectionFigures) {
		d.Retransmits, d.CwndReductions, d.BytesSent, d.BytesRetrans = retrans, reductions, bytesSent, bytesRetrans
		e, _ := figures.Efficiency(bytesSent, bytesRetrans)
		d.EfficiencyPercent = &e
	}
}

func busy(secs float64) tcpOpt {
	return func(d *figures.DirectionFigures) { d.Limited.BusyUs = uint64(secs * 1e6) }
}

func TestClassify(t *testing.T) {
	client := linuxHost(result.RoleClient, "10.0.1.1", 1<<20, 4<<20)
	server := linuxHost(result.RoleServer, "10.0.2.2", 1<<20, 4<<20)
	bigServer := linuxHost(result.RoleServer, "10.0.2.2", 64<<20, 64<<20)
	wan := func(single Measurement, multi *Measurement) Evidence {
		return Evidence{Sender: client, Receiver: server, BaselineRTT: 215 * time.Millisecond, MTU: 1500,
			Bottleneck: 1e9, BottleneckGiven: true, Single: single, Multi: multi}
	}
	tests := []struct {
		name     string
		e        Evidence
		limit    string
		host     string
		sysctls  []string // "role key=value"
		flags    []string
		expected float64
		mention  []string // in the summary, details, steps or notes
	}{
		{
			name: "submarine cable: 1 MiB tcp_rmem at 215 ms and 1 Gbit/s",
			e: wan(measured(20.5e6, 4, shares(0.69, 0), window(694000, true), slowStart(4, false)),
				&Measurement{Streams: 4, GoodputBps: 72e6}),
			limit: LimitReceiverWindow, host: result.RoleServer,
			sysctls: []string{"server net.ipv4.tcp_rmem=4096 131072 67108864", "client net.ipv4.tcp_wmem=4096 16384 67108864"},
			flags:   []string{"-w 26M", "-P 46"}, expected: figures.LineRateGoodput(1e9, 1500),
			mention: []string{"the server (10.0.2.2)", "26.9 MB", "64 MiB", "doubles", "turns autotuning off", "25.8 Mbits/sec"},
		},
		{
			name:  "submarine cable: a 64 KiB window at 215 ms gives 2.4 Mbit/s",
			e:     wan(measured(2.4e6, 5, shares(0.95, 0), window(64<<10, true)), nil),
			limit: LimitReceiverWindow, host: result.RoleServer,
			flags: []string{"-w 26M"}, expected: figures.LineRateGoodput(1e9, 1500),
			mention: []string{"2.44 Mbits/sec (window ÷ RTT)"},
		},
		{
			// The kernel's counters name the window for a third of the
			// time; the verdict and its details agree all the same.
			name:  "a 64 KiB window whose limited-time share is low",
			e:     wan(measured(2.4e6, 5, shares(0.35, 0), window(64<<10, true)), nil),
			limit: LimitReceiverWindow, host: result.RoleServer,
			flags: []string{"-w 26M"}, expected: figures.LineRateGoodput(1e9, 1500),
			mention: []string{"window ÷ RTT: 64.0 KBytes ÷ 215.00 ms = 2.44 Mbits/sec", "the window was the limit",
				"the kernel counts only the moments a send waited on the window"},
		},
		{
			name: "sender buffer",
			e: Evidence{Sender: client, Receiver: bigServer, BaselineRTT: 215 * time.Millisecond, Bottleneck: 1e9, BottleneckGiven: true,
				Single: measured(150e6, 10, shares(0.05, 0.6), window(30e6, true))},
			limit: LimitSenderBuffer, host: result.RoleClient,
			sysctls: []string{"client net.ipv4.tcp_wmem=4096 16384 67108864"},
			mention: []string{"the client (10.0.1.1)'s send buffer"},
		},
		{
			name:  "network: one stream fills the path",
			e:     wan(measured(935e6, 5, losses(12, 2, 580e6, 17376)), nil),
			limit: LimitNetwork, expected: 935e6,
			mention: []string{"fills the path", "12 retransmits"},
		},
		{
			name: "CPU",
			e: Evidence{Sender: client, Receiver: bigServer, BaselineRTT: 100 * time.Microsecond, Bottleneck: 10e9, BottleneckGiven: true,
				Single: func() Measurement { m := measured(3e9, 5); m.SenderCPU = 99; return m }()},
			limit: LimitCPU, host: result.RoleClient, mention: []string{"99% of a core"},
		},
		{
			name:  "slow start: a short test at a long RTT",
			e:     wan(measured(263e6, 4, shares(0.15, 0), window(20e6, false), slowStart(2.8, true), losses(3500, 1, 130e6, 5e6)), nil),
			limit: LimitSlowStart, flags: []string{"-t 30"}, expected: figures.LineRateGoodput(1e9, 1500),
			sysctls: []string{"server net.ipv4.tcp_rmem=4096 131072 67108864", "client net.ipv4.tcp_wmem=4096 16384 67108864"},
			mention: []string{"slow start took 2.8 s of the 4.0 s test", "70.0 Mbits/sec before", "11 RTTs"},
		},
		{
			name: "HyStart ended slow start early at a small window",
			e: wan(measured(2.4e6, 4, shares(0, 0), slowStart(0.5, true),
				func(d *figures.DirectionFigures) {
					d.SlowStart.Cause, d.SlowStart.CwndBytes = result.SlowStartSsthresh, 120000
				}), nil),
			limit: LimitSlowStart, flags: []string{"-t 30", "-C bbr"},
			mention: []string{"slow start ended early, at 0.5 s with a window of 120 kB (the BDP is 26.9 MB) and no loss", "HyStart"},
		},
		{
			name:  "a growing window is slow start, not a window limit",
			e:     wan(measured(100e6, 4, shares(0.4, 0), window(8e6, false), slowStart(3.5, true)), nil),
			limit: LimitSlowStart, mention: []string{"still growing"},
		},
		{
			name: "congestion: steady loss",
			e: wan(measured(48e6, 5, losses(2100, 40, 30e6, 3e6)),
				&Measurement{Streams: 4, GoodputBps: 190e6}),
			limit: LimitCongestion, flags: []string{"-P 4", "-C bbr"}, expected: 190e6,
			mention: []string{"2100 retransmits", "40 congestion-window reductions", "TCP Efficiency 90.00%", "Mathis"},
		},
		{
			name: "congestion: a count of one is singular",
			e: wan(measured(48e6, 5, losses(2100, 1, 30e6, 3e6)),
				&Measurement{Streams: 4, GoodputBps: 190e6}),
			limit: LimitCongestion, flags: []string{"-P 4", "-C bbr"}, expected: 190e6,
			mention: []string{"2100 retransmits and 1 congestion-window reduction kept one stream"},
		},
		{
			name: "BBR at its window: little rwnd-limited time, but the rate after slow start is window ÷ RTT",
			e: wan(measured(18.9e6, 4, shares(0.22, 0), window(694000, true), slowStart(2.5, true),
				func(d *figures.DirectionFigures) { d.SlowStart.RateAfter = 25.5e6 }), nil),
			limit: LimitReceiverWindow, host: result.RoleServer,
			mention: []string{"ran at what the server (10.0.2.2)'s receive window allows", "the stream ran at 25.5 Mbits/sec after slow start"},
		},
		{
			name:  "one retransmit is not a loss problem",
			e:     wan(measured(760e6, 4, losses(1, 1, 380e6, 1448)), nil),
			limit: LimitNetwork, mention: []string{"no host limit shows"},
		},
		{
			name:  "application: the sender idled",
			e:     wan(measured(10e6, 5, busy(1)), nil),
			limit: LimitApplication, host: result.RoleClient,
		},
		{
			name:  "unknown without TCP_INFO",
			e:     wan(Measurement{Streams: 1, Seconds: 5, GoodputBps: 10e6}, nil),
			limit: LimitUnknown,
		},
		{
			name: "measured bottleneck: the multi-stream goodput is the ideal",
			e: Evidence{Sender: client, Receiver: server, BaselineRTT: 215 * time.Millisecond, Bottleneck: 400e6,
				Single: measured(20e6, 5, shares(0.8, 0), window(700000, true)), Multi: &Measurement{Streams: 4, GoodputBps: 400e6}},
			limit: LimitReceiverWindow, host: result.RoleServer, expected: 400e6, flags: []string{"-w 11M", "-P 20"},
			mention: []string{"that several streams reached together"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Classify(tc.e)
			a := Recommend(tc.e, v)
			if v.Limit != tc.limit || v.Host != tc.host {
				t.Errorf("verdict %s on %q, want %s on %q: %s", v.Limit, v.Host, tc.limit, tc.host, v.Summary)
			}
			var got []string
			for _, s := range a.Sysctls {
				got = append(got, s.Host+" "+s.Key+"="+s.Value)
			}
			if tc.sysctls != nil && !slices.Equal(got, tc.sysctls) {
				t.Errorf("sysctls %q, want %q", got, tc.sysctls)
			}
			for _, f := range tc.flags {
				if !slices.Contains(a.Flags, f) {
					t.Errorf("flags %q lack %q", a.Flags, f)
				}
			}
			if tc.expected > 0 && !near(a.ExpectedBps, tc.expected, 1e-6) {
				t.Errorf("expected %.4g, want %.4g", a.ExpectedBps, tc.expected)
			}
			all := strings.Join(append(append(append([]string{v.Summary}, v.Details...), a.Steps...), a.Notes...), "\n")
			for _, m := range tc.mention {
				if !strings.Contains(all, m) {
					t.Errorf("advice lacks %q:\n%s", m, all)
				}
			}
			if (v.Limit == LimitReceiverWindow || v.Limit == LimitSenderBuffer) && float64(a.Buffer) < 2*tc.e.BDP() {
				t.Errorf("buffer %d is below 2 × BDP %.0f", a.Buffer, tc.e.BDP())
			}
		})
	}
}

func TestSysctlCommand(t *testing.T) {
	s := Sysctl{Key: "net.ipv4.tcp_rmem", Value: "4096 131072 67108864"}
	if got, want := s.Command(), `sysctl -w net.ipv4.tcp_rmem="4096 131072 67108864"`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}

// A host that did not report its limits still gets the setting, with
// Linux's usual minimum and default, and the step says the current value
// is unknown; a non-Linux host gets none.
func TestRecommendUnknownLimits(t *testing.T) {
	e := Evidence{
		Sender:      Host{Role: result.RoleClient, System: "Darwin mac 23.0 arm64"},
		Receiver:    Host{Role: result.RoleServer},
		BaselineRTT: 215 * time.Millisecond, Bottleneck: 1e9, BottleneckGiven: true,
		Single: measured(20e6, 5, shares(0.7, 0), window(700000, true)),
	}
	v := Classify(e)
	a := Recommend(e, v)
	if len(a.Sysctls) != 1 || a.Sysctls[0].Host != result.RoleServer || a.Sysctls[0].Value != "4096 131072 67108864" {
		t.Fatalf("sysctls %+v", a.Sysctls)
	}
	if !strings.Contains(strings.Join(a.Steps, "\n"), "current value is unknown") {
		t.Errorf("steps do not say the value is unknown: %q", a.Steps)
	}
}

func TestBufferFor(t *testing.T) {
	tests := []struct {
		bdp  float64
		want int64
	}{
		{0, 0},
		{1e5, 4 << 20},
		{26.875e6, 64 << 20}, // 1 Gbit/s × 215 ms: 2 × BDP = 53.75 MB
		{1.477e6, 4 << 20},
		{40e6, 128 << 20},
	}
	for _, tc := range tests {
		got := BufferFor(tc.bdp)
		if got != tc.want {
			t.Errorf("BufferFor(%g) = %d, want %d", tc.bdp, got, tc.want)
		}
		if tc.bdp > 0 && float64(got) < 2*tc.bdp {
			t.Errorf("BufferFor(%g) = %d is below 2 × BDP", tc.bdp, got)
		}
	}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// The rules run in the order the verdict depends on: a full path first
// (over the test, or after slow start's overshoot), then the windows, the
// CPU, slow start (a steady state not reached among it), loss, the
// application, unknown without TCP_INFO or with a bottleneck the host
// limited, and the network when nothing on a host shows.
func TestRulesOrder(t *testing.T) {
	want := []string{LimitNetwork, LimitNetwork, LimitNetwork, LimitReceiverWindow, LimitSenderBuffer, LimitCPU, LimitSlowStart, LimitSlowStart,
		LimitSlowStart, LimitCongestion, LimitApplication, LimitUnknown, LimitUnknown, LimitNetwork}
	var got []string
	for _, r := range rules {
		got = append(got, r.limit)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules %v; want %v", got, want)
	}
	// A stream that fills the path is network-limited even when its
	// receive window held it back: the first rule wins.
	e := Evidence{Sender: linuxHost(result.RoleClient, "", 1<<20, 1<<20), Receiver: linuxHost(result.RoleServer, "", 1<<20, 1<<20),
		BaselineRTT: time.Millisecond, Bottleneck: 1e9, BottleneckGiven: true,
		Single: measured(940e6, 5, shares(0.9, 0), window(1<<20, true))}
	if v := Classify(e); v.Limit != LimitNetwork {
		t.Errorf("a full path with a limiting window: %s; want %s", v.Limit, LimitNetwork)
	}
}

// TestRecommendNothingInPlace: advise does not recommend -C bbr to a
// sender that already runs BBR, and says it does.
func TestRecommendNothingInPlace(t *testing.T) {
	wan := func(single Measurement, multi *Measurement) Evidence {
		return Evidence{Sender: linuxHost(result.RoleClient, "10.0.1.1", 1<<20, 4<<20),
			Receiver: linuxHost(result.RoleServer, "10.0.2.2", 1<<20, 4<<20), BaselineRTT: 215 * time.Millisecond,
			MTU: 1500, Bottleneck: 1e9, BottleneckGiven: true, Single: single, Multi: multi}
	}
	e := wan(measured(48e6, 5, losses(2100, 40, 30e6, 3e6)), nil)
	v := Classify(e)
	if v.Limit != LimitCongestion {
		t.Fatalf("verdict %s, want congestion", v.Limit)
	}
	if a := Recommend(e, v); !slices.Contains(a.Flags, "-C bbr") {
		t.Fatalf("a cubic sender: flags %v lack -C bbr", a.Flags)
	}
	for _, place := range []string{"socket", "default"} {
		e := wan(measured(48e6, 5, losses(2100, 40, 30e6, 3e6)), nil)
		if place == "socket" {
			e.Sender.Socket = &result.Socket{Congestion: "bbr"}
		} else {
			e.Sender.Limits.Congestion = "bbr"
		}
		a := Recommend(e, Classify(e))
		if slices.Contains(a.Flags, "-C bbr") {
			t.Errorf("bbr in the %s: flags %v recommend -C bbr", place, a.Flags)
		}
		if !strings.Contains(strings.Join(a.Steps, "\n"), "already runs bbr") {
			t.Errorf("bbr in the %s: steps do not say so: %q", place, a.Steps)
		}
	}
}
