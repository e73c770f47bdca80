package advise

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// The limits Classify tells apart.
const (
	LimitReceiverWindow = "receiver-window"
	LimitSenderBuffer   = "sender-buffer"
	LimitCongestion     = "congestion" // loss or queueing that makes TCP back off below the bottleneck
	LimitNetwork        = "network"    // the path is full: nothing on the hosts to tune
	LimitCPU            = "cpu"
	LimitApplication    = "application"
	// LimitSlowStart: the test ended before TCP opened its window to
	// the path's BDP; a longer test reads higher.
	LimitSlowStart = "slow-start"
	LimitUnknown   = "unknown"
)

// Thresholds of the classification.
const (
	// FullShare of the ideal rate counts as reaching the bottleneck.
	FullShare = 0.9
	// LimitedShare of busy time makes a window or buffer the limit.
	LimitedShare = 0.3
	// CPUBusy percent of one core makes a host CPU-bound.
	CPUBusy = 90.0
	// IdleShare: a sender busy for less of the test than this had no
	// data to send (application-limited).
	IdleShare = 0.7
	// SlowStartShare of the test spent in slow start makes the test too
	// short to judge the path.
	SlowStartShare = 0.5
	// WindowReached: a stream at this share of window ÷ RTT ran at what
	// its window allows.
	WindowReached = 0.8
	// LossShare of the bytes sent retransmitted makes loss worth naming.
	LossShare = 0.001
)

// Host is one end as advise sees it.
type Host struct {
	Role    string         `json:"role"` // result.RoleClient or result.RoleServer
	Address string         `json:"address,omitempty"`
	System  string         `json:"system,omitempty"`
	Limits  *result.Limits `json:"limits,omitempty"`
	// Socket is the data socket's buffers as requested and granted, from
	// the single-stream test.
	Socket *result.Socket `json:"socket,omitempty"`
}

// Linux reports whether the host runs Linux (or its system is unknown,
// in which case advice is given in Linux terms).
func (h Host) Linux() bool { return h.System == "" || strings.HasPrefix(h.System, "Linux") }

// Name is "the server (10.0.0.2)".
func (h Host) Name() string {
	if h.Address == "" {
		return "the " + h.Role
	}
	return fmt.Sprintf("the %s (%s)", h.Role, h.Address)
}

// Measurement is one of advise's tests, summed over its streams.
type Measurement struct {
	Streams     int               `json:"streams"`
	Seconds     float64           `json:"seconds"`
	GoodputBps  float64           `json:"goodput_bps"`
	SenderCPU   float64           `json:"sender_cpu_percent"`
	ReceiverCPU float64           `json:"receiver_cpu_percent"`
	TCP         *DirectionFigures `json:"tcp,omitempty"`
	Error       string            `json:"error,omitempty"`
}

// MeasurementOf sums a finished test's direction.
func MeasurementOf(r *result.Result, senderRole string, bottleneck float64) Measurement {
	run := Measurement{Error: r.Error}
	for _, d := range r.Directions() {
		if d.SenderRole != senderRole {
			continue
		}
		run.Streams = len(d.Flows)
		run.Seconds = d.Received.Seconds
		run.GoodputBps = finite(d.Received.BitsPerSecond())
		run.TCP = DirectionOf(d, bottleneck)
	}
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		if e.Role == senderRole {
			run.SenderCPU = e.CPU.TotalPercent
		} else if e.Role != "" {
			run.ReceiverCPU = e.CPU.TotalPercent
		}
	}
	return run
}

// Evidence is everything Classify weighs.
type Evidence struct {
	Sender, Receiver Host
	BaselineRTT      time.Duration
	MTU              int // path MTU; 0 means 1500
	// Bottleneck is the path's bottleneck rate in bit/s: given, or else
	// measured (the best multi-stream goodput, which is already a TCP
	// goodput). BottleneckGiven says which.
	Bottleneck      float64
	BottleneckGiven bool
	Single          Measurement
	Multi           *Measurement
}

// Ideal is the TCP goodput a full bottleneck gives: the line-rate
// arithmetic for a given rate, the measurement itself otherwise.
func (e Evidence) Ideal() float64 {
	if e.BottleneckGiven {
		return LineRateGoodput(e.Bottleneck, e.MTU)
	}
	return e.Bottleneck
}

// BDP of the path, in bytes, at the bottleneck rate.
func (e Evidence) BDP() float64 { return BDP(e.Bottleneck, e.BaselineRTT) }

// Verdict names what limits a single stream, on which host, with the
// numbers that show it.
type Verdict struct {
	Limit string `json:"limit"`
	// Host is the role of the host to change ("" when no host is at
	// fault: the network).
	Host    string   `json:"host,omitempty"`
	Summary string   `json:"summary"`
	Details []string `json:"details"`
	// Reached is the single stream's goodput as a share of the ideal.
	Reached float64 `json:"reached"`
}

// Classify decides what limits a single stream. The order matters: a
// stream at the bottleneck is network-limited whatever else the counters
// say; then the windows, whose counters name the limit directly; then the
// CPU; then a test too short for its slow start; then loss; then a sender
// that had nothing to send.
func Classify(e Evidence) Verdict {
	s := e.Single
	ideal := e.Ideal()
	v := Verdict{Limit: LimitUnknown}
	if ideal > 0 {
		v.Reached = s.GoodputBps / ideal
	}
	var lt *LimitedTime
	var tcp *DirectionFigures
	if tcp = s.TCP; tcp != nil {
		lt = tcp.Limited
	}
	rtt := e.BaselineRTT
	if rtt <= 0 && tcp != nil {
		rtt = us(tcp.BaselineRTTus)
	}
	belowIdeal := ideal <= 0 || v.Reached < FullShare
	cpuHost, cpu := e.Sender.Role, s.SenderCPU
	if s.ReceiverCPU > s.SenderCPU {
		cpuHost, cpu = e.Receiver.Role, s.ReceiverCPU
	}
	reach := fmt.Sprintf("one stream reached %s, %s of the %s %s", rate(s.GoodputBps), pct(v.Reached), rate(ideal), e.idealWhat())
	// A window limit shows as time limited by it, or as a stream that
	// reached what its window allows (window ÷ RTT) after slow start;
	// either way with a window that had stopped growing: one that
	// autotuning was still opening limits only a test too short for the
	// path. (BBR paces, so a window-bound BBR sender is often waiting on
	// its pacing timer rather than on the window, and shows little
	// rwnd-limited time.)
	capped := tcp == nil || tcp.WindowPlateau == nil || *tcp.WindowPlateau
	var ss *SlowStartFigures
	if tcp != nil {
		ss = tcp.SlowStart
	}
	steady := s.GoodputBps
	if ss != nil && ss.Ended && ss.RateAfter > steady {
		steady = ss.RateAfter
	}
	var windowBound float64
	if tcp != nil {
		windowBound = WindowRate(float64(tcp.MaxSndWnd), rtt)
	}
	atWindow := windowBound > 0 && steady >= WindowReached*windowBound && (ideal <= 0 || windowBound < FullShare*ideal)
	rwndLimited := capped && lt != nil && (lt.Rwnd >= LimitedShare && lt.Rwnd >= lt.Sndbuf || atWindow && lt.Sndbuf < LimitedShare)
	slowStartHeavy := ss != nil && (!ss.Ended || ss.Share >= SlowStartShare)
	// Slow start that ended without loss at a window far below the BDP:
	// HyStart took a rise in delay for congestion, and CUBIC grows slowly
	// from there at a long RTT.
	earlyExit := ss != nil && ss.Ended && ss.Cause == result.SlowStartSsthresh && tcp.Retransmits == 0 &&
		e.BDP() > 0 && float64(ss.CwndBytes) < e.BDP()/4
	lossy := tcp != nil && tcp.Retransmits > 0 && tcp.CwndReductions > 0 && tcp.BytesSent > 0 &&
		float64(tcp.BytesRetrans) >= LossShare*float64(tcp.BytesSent)

	switch {
	case ideal > 0 && !belowIdeal:
		v.Limit = LimitNetwork
		v.Summary = fmt.Sprintf("network-limited: one stream fills the path (%s, %s of %s)", rate(s.GoodputBps), pct(v.Reached), rate(ideal))
		if tcp != nil && tcp.Retransmits > 0 {
			v.Details = append(v.Details, fmt.Sprintf("%d retransmits (TCP Efficiency %s): the bottleneck's queue overflowed now and then, as it does when TCP fills a path",
				tcp.Retransmits, pctp(tcp.EfficiencyPercent)))
		}
	case rwndLimited:
		v.Limit, v.Host = LimitReceiverWindow, e.Receiver.Role
		if lt.Rwnd >= LimitedShare {
			v.Summary = fmt.Sprintf("receiver-window-limited: %s's receive window held the sender back %s of the time", e.Receiver.Name(), pct(lt.Rwnd))
		} else {
			v.Summary = fmt.Sprintf("receiver-window-limited: one stream ran at what %s's receive window allows", e.Receiver.Name())
		}
		v.Details = append(v.Details, reach)
		if windowBound > 0 {
			when := "over the test"
			if ss != nil && ss.Ended && ss.RateAfter > 0 {
				when = "after slow start"
			}
			v.Details = append(v.Details, fmt.Sprintf("its largest advertised window, %s, over the %s RTT allows at most %s (window ÷ RTT); "+
				"the stream ran at %s %s; the path needs a window of %s (the BDP)",
				size(float64(tcp.MaxSndWnd)), ms(rtt), rate(windowBound), rate(steady), when, size(e.BDP())))
		}
	case lt != nil && lt.Sndbuf >= LimitedShare && capped:
		v.Limit, v.Host = LimitSenderBuffer, e.Sender.Role
		v.Summary = fmt.Sprintf("sender-buffer-limited: %s's send buffer was full %s of the time", e.Sender.Name(), pct(lt.Sndbuf))
		v.Details = append(v.Details, reach)
	case cpu >= CPUBusy && belowIdeal:
		v.Limit, v.Host = LimitCPU, cpuHost
		v.Summary = fmt.Sprintf("CPU-limited: the %s used %.0f%% of a core", cpuHost, cpu)
		v.Details = append(v.Details, reach)
	case earlyExit && belowIdeal:
		v.Limit = LimitSlowStart
		v.Summary = fmt.Sprintf("slow-start-limited: slow start ended early, at %.1f s with a window of %s (the BDP is %s) and no loss; "+
			"the window grew slowly from there", ss.End, size(float64(ss.CwndBytes)), size(e.BDP()))
		v.Details = append(v.Details, reach,
			"a rise in RTT ends CUBIC's slow start (HyStart) before any loss; at a long RTT, CUBIC then takes many seconds to open the window")
	case slowStartHeavy && belowIdeal:
		v.Limit = LimitSlowStart
		if ss.Ended {
			v.Summary = fmt.Sprintf("slow-start-limited: slow start took %.1f s of the %.1f s test; the test is too short for this path, not held back by a host",
				ss.End, ss.Duration)
		} else {
			v.Summary = fmt.Sprintf("slow-start-limited: TCP was still opening its window when the %.1f s test ended; the test is too short for this path", ss.Duration)
		}
		v.Details = append(v.Details, reach)
		if ss.RateAfter > 0 {
			v.Details = append(v.Details, fmt.Sprintf("%s before slow start ended, %s after", rate(ss.RateBefore), rate(ss.RateAfter)))
		}
		if lt != nil && lt.Rwnd >= LimitedShare {
			v.Details = append(v.Details, fmt.Sprintf("the receive window held the sender back %s of the time, but it was still growing: autotuning opens it about as fast as slow start opens the congestion window", pct(lt.Rwnd)))
		}
	case lossy && belowIdeal:
		v.Limit = LimitCongestion
		v.Summary = fmt.Sprintf("congestion/loss-limited: %d retransmits and %d congestion-window reductions kept one stream at %s",
			tcp.Retransmits, tcp.CwndReductions, rate(s.GoodputBps))
		v.Details = append(v.Details, reach)
		if tcp.BytesSent > 0 {
			v.Details = append(v.Details, fmt.Sprintf("%s of the bytes sent were retransmitted (TCP Efficiency %s)",
				pct(float64(tcp.BytesRetrans)/float64(tcp.BytesSent)), pctp(tcp.EfficiencyPercent)))
		}
	case tcp != nil && s.Seconds > 0 && lt != nil && float64(lt.BusyUs)/1e6 < IdleShare*s.Seconds:
		v.Limit, v.Host = LimitApplication, e.Sender.Role
		v.Summary = fmt.Sprintf("application-limited: the sender had data in flight only %.1f s of %.1f s",
			float64(lt.BusyUs)/1e6, s.Seconds)
	case tcp == nil:
		v.Summary = "unknown: the sender reported no TCP_INFO (" + reach + ")"
	default:
		v.Limit = LimitNetwork
		v.Summary = fmt.Sprintf("network-limited: no host limit shows (%s)", reach)
	}
	if lt != nil {
		v.Details = append(v.Details, fmt.Sprintf("busy %.2f s: receiver window %s, sender buffer %s, network %s",
			float64(lt.BusyUs)/1e6, pct(lt.Rwnd), pct(lt.Sndbuf), pct(lt.Network)))
	}
	return v
}

func (e Evidence) idealWhat() string {
	if e.BottleneckGiven {
		return fmt.Sprintf("that %s gives (line-rate arithmetic at MTU %d)", rate(e.Bottleneck), mtuOr(e.MTU))
	}
	return "that several streams reached together"
}

// Sysctl is one kernel setting to change on one host.
type Sysctl struct {
	Host    string `json:"host"` // role
	Key     string `json:"key"`
	Value   string `json:"value"`
	Current string `json:"current,omitempty"`
}

// Command is the shell line that sets it.
func (s Sysctl) Command() string {
	v := s.Value
	if strings.Contains(v, " ") {
		v = `"` + v + `"`
	}
	return fmt.Sprintf("sysctl -w %s=%s", s.Key, v)
}

// Advice is what to change, with numbers.
type Advice struct {
	// Buffer is the socket buffer that holds a window of the BDP: 2 ×
	// BDP rounded up to a power of two, since Linux gives half of a buffer
	// to its own bookkeeping.
	Buffer  int64    `json:"buffer_bytes,omitempty"`
	Sysctls []Sysctl `json:"sysctls,omitempty"`
	// Flags are wireperf options that reach the goal without sysctls
	// where possible (-w, -P).
	Flags []string `json:"flags,omitempty"`
	// ExpectedBps is the goodput to expect once the advice is taken.
	ExpectedBps float64  `json:"expected_bps,omitempty"`
	Steps       []string `json:"steps"`
	Notes       []string `json:"notes,omitempty"`
}

// Notes that explain Linux's socket buffers (docs/metrics.md, "Linux
// socket buffers").
const (
	NoteDoubling = "Linux counts its own bookkeeping in a socket buffer: it doubles an SO_RCVBUF/SO_SNDBUF request " +
		"(-w 32M is granted 64 MiB) and, autotuned, advertises a window of about half the buffer. A window of one BDP " +
		"therefore needs a buffer of about two."
	NoteAutotuning = "An explicit -w (SO_SNDBUF/SO_RCVBUF) turns autotuning off on that socket: the buffer stays at what " +
		"was granted, capped by net.core.rmem_max/wmem_max (global, not per namespace), and tcp_rmem/tcp_wmem no longer " +
		"apply. Without -w, autotuning grows each buffer up to the third field of tcp_rmem/tcp_wmem."
)

// Recommend turns a verdict into changes with numbers.
func Recommend(e Evidence, v Verdict) Advice {
	var a Advice
	ideal := e.Ideal()
	bdp := e.BDP()
	single := e.Single.GoodputBps
	rtt := e.BaselineRTT
	hosts := map[string]Host{e.Receiver.Role: e.Receiver, e.Sender.Role: e.Sender}
	sysctlSteps := func(list []Sysctl) {
		for _, s := range list {
			now := fmt.Sprintf("now %q", s.Current)
			if s.Current == "" {
				now = "its current value is unknown: that host did not report its limits"
			}
			a.Steps = append(a.Steps, fmt.Sprintf("on %s: %s   (%s)", hosts[s.Host].Name(), s.Command(), now))
		}
	}
	switch v.Limit {
	case LimitReceiverWindow, LimitSenderBuffer:
		a.Buffer = BufferFor(bdp)
		if a.Buffer == 0 {
			a.Steps = append(a.Steps, "the BDP is unknown (no RTT or bottleneck): give --bottleneck RATE")
			break
		}
		a.Steps = append(a.Steps, fmt.Sprintf("the BDP is %s × %s = %s; a window that large needs a socket buffer of about %s (2 × BDP, rounded up)",
			rate(e.Bottleneck), ms(rtt), size(bdp), mib(a.Buffer)))
		a.Sysctls = bufferSysctls(e, a.Buffer, true)
		sysctlSteps(a.Sysctls)
		if len(a.Sysctls) == 0 {
			a.Steps = append(a.Steps, "both hosts' autotuning limits already allow such a buffer: the receiving application "+
				"may not have read fast enough (see its CPU), or an explicit buffer (-w) was in force")
		}
		w := int64(math.Ceil(bdp/(1<<20))) << 20
		a.Flags = append(a.Flags, fmt.Sprintf("-w %dM", w>>20))
		a.Steps = append(a.Steps, fmt.Sprintf("or, for one test: -w %dM (granted %d MiB after Linux doubles it; needs net.core.rmem_max and wmem_max ≥ %d, and turns autotuning off)",
			w>>20, 2*(w>>20), w))
		if n := streamsFor(ideal, single); n > 1 {
			a.Flags = append(a.Flags, fmt.Sprintf("-P %d", n))
			a.Steps = append(a.Steps, fmt.Sprintf("or, with the buffers as they are: -P %d streams of about %s each", n, rate(single)))
		}
		a.ExpectedBps = ideal
		a.Notes = append(a.Notes, NoteDoubling, NoteAutotuning)
		if rtt > 0 && bdp > 0 {
			a.Notes = append(a.Notes, slowStartNote(bdp, rtt, e.MTU))
		}
	case LimitSlowStart:
		secs := 30.0
		if rtt > 0 && bdp > 0 {
			secs = max(secs, math.Ceil(10*slowStartSeconds(bdp, rtt, e.MTU)))
		}
		a.Flags = append(a.Flags, fmt.Sprintf("-t %.0f", secs))
		a.Steps = append(a.Steps, fmt.Sprintf("measure for longer: -t %.0f (advise -t %.0f), so that slow start is a small part of the test; or leave it out of the totals with -O", secs, secs))
		if ss := e.Single.slowStart(); ss != nil && ss.Ended && ss.Cause == result.SlowStartSsthresh && float64(ss.CwndBytes) < bdp/4 {
			a.Flags = append(a.Flags, "-C bbr")
			a.Steps = append(a.Steps, "or -C bbr, which ramps up by measuring the bottleneck rather than by watching the delay")
		}
		if a.Buffer = BufferFor(bdp); a.Buffer > 0 {
			a.Sysctls = bufferSysctls(e, a.Buffer, false)
			if len(a.Sysctls) > 0 {
				a.Steps = append(a.Steps, fmt.Sprintf("and let the window reach the BDP (%s, so a buffer of %s):", size(bdp), mib(a.Buffer)))
				sysctlSteps(a.Sysctls)
			}
		}
		a.ExpectedBps = ideal
		if rtt > 0 && bdp > 0 {
			a.Notes = append(a.Notes, slowStartNote(bdp, rtt, e.MTU))
		}
	case LimitCongestion:
		if m := e.Multi; m != nil && m.GoodputBps > 1.3*single && m.Streams > 1 {
			a.Flags = append(a.Flags, fmt.Sprintf("-P %d", m.Streams))
			a.Steps = append(a.Steps, fmt.Sprintf("-P %d: each stream backs off on its own losses; %d streams together reached %s",
				m.Streams, m.Streams, rate(m.GoodputBps)))
			a.ExpectedBps = m.GoodputBps
		}
		a.Flags = append(a.Flags, "-C bbr")
		a.Steps = append(a.Steps, "-C bbr: BBR paces at its estimate of the bottleneck and does not halve its window on random loss",
			"find where the packets are lost: interface and qdisc drop counters along the path (ip -s link, tc -s qdisc)")
		if tcp := e.Single.TCP; tcp != nil && tcp.BytesSent > 0 && rtt > 0 && tcp.CwndReductions >= 4 {
			p := float64(tcp.BytesRetrans) / float64(tcp.BytesSent)
			if p > 0 {
				mss := float64(mtuOr(e.MTU) - TCPIPHeaderBytes)
				a.Notes = append(a.Notes, fmt.Sprintf("At %s loss and %s RTT, the Mathis bound for one Reno-like stream is MSS ÷ RTT × 1.22 ÷ √p = %s; "+
					"a stream under steady random loss gets about that, whatever the path's capacity.",
					pct(p), ms(rtt), rate(mss*8/rtt.Seconds()*1.22/math.Sqrt(p))))
			}
		}
	case LimitCPU:
		a.Steps = append(a.Steps, fmt.Sprintf("the %s is CPU-bound: spread the work with -P %d (more cores), write larger blocks (-l 1M), or use a faster host",
			v.Host, max(2, streamsFor(ideal, single))))
		a.ExpectedBps = e.Multi.goodput()
	case LimitApplication:
		a.Steps = append(a.Steps, "the sender did not keep the connection busy: remove any -b rate, or feed it data faster")
	case LimitNetwork:
		a.Steps = append(a.Steps, fmt.Sprintf("nothing to tune on the hosts: one stream gets %s of %s", rate(single), rate(ideal)))
		a.ExpectedBps = single
		if tcp := e.Single.TCP; tcp != nil && tcp.BufferDelayPercent != nil && *tcp.BufferDelayPercent > 100 &&
			us(tcp.MeanRTTus)-us(tcp.BaselineRTTus) >= 5*time.Millisecond {
			a.Notes = append(a.Notes, fmt.Sprintf("The RTT rose from %s to %s under load (Buffer Delay %.0f%%): the bottleneck's queue is deep. "+
				"An AQM there (fq_codel, cake) or BBR keeps it short.", ms(us(tcp.BaselineRTTus)), ms(us(tcp.MeanRTTus)), *tcp.BufferDelayPercent))
		}
	default:
		a.Steps = append(a.Steps, "not enough TCP_INFO to tell (is the sender Linux?)")
	}
	if !e.BottleneckGiven && e.Multi != nil && e.Multi.TCP != nil && e.Multi.TCP.Limited != nil && e.Multi.TCP.Limited.Rwnd+e.Multi.TCP.Limited.Sndbuf >= LimitedShare {
		a.Notes = append(a.Notes, "The bottleneck was estimated from the multi-stream test, whose streams were window-limited too: "+
			"the path may be faster. Give --bottleneck RATE for a firmer verdict.")
	}
	return a
}

// BufferFor is the socket buffer that holds a window of bdp bytes: 2 ×
// BDP rounded up to a power of two, at least 4 MiB.
func BufferFor(bdp float64) int64 {
	if bdp <= 0 {
		return 0
	}
	b := int64(4 << 20)
	for float64(b) < 2*bdp && b < 1<<40 {
		b <<= 1
	}
	return b
}

// bufferSysctls lists the autotuning limits below buffer: the receiver's
// tcp_rmem and the sender's tcp_wmem, each keeping its minimum and
// default. A host that did not report its limits gets the setting
// anyway when unknownToo is set (with Linux's usual minimum and default).
func bufferSysctls(e Evidence, buffer int64, unknownToo bool) []Sysctl {
	var out []Sysctl
	add := func(h Host, key string, l *result.Limits) {
		if !h.Linux() {
			return
		}
		cur, known := [3]int64{4096, 131072, 0}, false
		if key == "net.ipv4.tcp_wmem" {
			cur[1] = 16384
		}
		if l != nil {
			t := l.TCPRmem
			if key == "net.ipv4.tcp_wmem" {
				t = l.TCPWmem
			}
			if t[2] > 0 {
				cur, known = t, true
			}
		}
		if known && cur[2] >= buffer || !known && !unknownToo {
			return
		}
		s := Sysctl{Host: h.Role, Key: key, Value: fmt.Sprintf("%d %d %d", cur[0], cur[1], buffer)}
		if known {
			s.Current = fmt.Sprintf("%d %d %d", cur[0], cur[1], cur[2])
		}
		out = append(out, s)
	}
	add(e.Receiver, "net.ipv4.tcp_rmem", e.Receiver.Limits)
	add(e.Sender, "net.ipv4.tcp_wmem", e.Sender.Limits)
	return out
}

// streamsFor is how many streams of rate per reach ideal (at most 128).
func streamsFor(ideal, per float64) int {
	if ideal <= 0 || per <= 0 {
		return 0
	}
	return min(128, int(math.Ceil(ideal/per*0.999)))
}

// slowStartSeconds is how long slow start takes to open a window of bdp
// from the initial ten segments, doubling every RTT.
func slowStartSeconds(bdp float64, rtt time.Duration, mtu int) float64 {
	mss := float64(mtuOr(mtu) - TCPIPHeaderBytes)
	return math.Ceil(math.Log2(max(bdp/(10*mss), 1))) * rtt.Seconds()
}

// slowStartNote says how long slow start takes at this RTT.
func slowStartNote(bdp float64, rtt time.Duration, mtu int) string {
	secs := slowStartSeconds(bdp, rtt, mtu)
	return fmt.Sprintf("Slow start needs about %.0f RTTs (%.1f s at %s) to open a window of %s, and a test reads low until it has: "+
		"test for much longer than that to see the steady rate.", secs/rtt.Seconds(), secs, ms(rtt), size(bdp))
}

func (r *Measurement) slowStart() *SlowStartFigures {
	if r == nil || r.TCP == nil {
		return nil
	}
	return r.TCP.SlowStart
}

func (r *Measurement) goodput() float64 {
	if r == nil {
		return 0
	}
	return r.GoodputBps
}

func mtuOr(mtu int) int {
	if mtu <= 0 {
		return DefaultMTU
	}
	return mtu
}

// Formatting for verdicts and advice.

func rate(bps float64) string {
	if bps <= 0 {
		return "unknown"
	}
	return strings.TrimSpace(units.FormatRate(bps, units.AdaptiveBits))
}

// size prints bytes in decimal MB where large, as BDPs are usually given.
func size(b float64) string {
	switch {
	case b >= 1e6:
		return strconv.FormatFloat(b/1e6, 'f', 1, 64) + " MB"
	case b >= 1e3:
		return strconv.FormatFloat(b/1e3, 'f', 0, 64) + " kB"
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " B"
}

func ms(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatInt(d.Microseconds(), 10) + " µs"
	}
	return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + " ms"
}

// mib prints a buffer size in binary units, as sysctls are set.
func mib(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return strconv.FormatInt(b>>20, 10) + " MiB"
	}
	return strconv.FormatInt(b, 10) + " bytes"
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func pctp(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*p, 'f', 2, 64) + "%"
}
