package advise

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

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
		a.Steps = append(a.Steps, fmt.Sprintf("measure for longer: -t %.0f (advise -t %.0f), so that slow start is a small part of the test", secs, secs))
		if omit := omitFor(e.Single.SlowStart(), bdp, rtt, e.MTU); omit > 0 {
			// -O runs that much longer first and leaves it out of the
			// totals, as iperf3's does, so it goes with any -t.
			a.Steps = append(a.Steps, fmt.Sprintf("or run slow start before the measured time: -O %d (%d s more, not counted in the totals)", omit, omit))
		}
		if ss := e.Single.SlowStart(); ss != nil && ss.Ended && ss.Cause == result.SlowStartSsthresh && float64(ss.CwndBytes) < bdp/4 {
			if cc := e.SenderCongestion(); isBBR(cc) {
				a.Steps = append(a.Steps, fmt.Sprintf("the sender already runs %s: -C bbr would change nothing", cc))
			} else {
				a.Flags = append(a.Flags, "-C bbr")
				a.Steps = append(a.Steps, "or -C bbr, which ramps up by measuring the bottleneck rather than by watching the delay")
			}
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
		if cc := e.SenderCongestion(); isBBR(cc) {
			a.Steps = append(a.Steps, fmt.Sprintf("the sender already runs %s, which does not halve its window on random loss: "+
				"the loss is heavy enough to limit it all the same", cc))
		} else {
			a.Flags = append(a.Flags, "-C bbr")
			a.Steps = append(a.Steps, "-C bbr: BBR paces at its estimate of the bottleneck and does not halve its window on random loss")
		}
		a.Steps = append(a.Steps, "find where the packets are lost: interface and qdisc drop counters along the path (ip -s link, tc -s qdisc)")
		if tcp := e.Single.TCP; tcp != nil && tcp.BytesSent > 0 && rtt > 0 && tcp.CwndReductions >= 4 {
			p := float64(tcp.BytesRetrans) / float64(tcp.BytesSent)
			if p > 0 {
				mss := float64(mtuOr(e.MTU) - figures.TCPIPHeaderBytes)
				a.Notes = append(a.Notes, fmt.Sprintf("At %s loss and %s RTT, the Mathis bound for one Reno-like stream is MSS ÷ RTT × 1.22 ÷ √p = %s; "+
					"a stream under steady random loss gets about that, whatever the path's capacity.",
					pct(p), ms(rtt), rate(mss*8/rtt.Seconds()*1.22/math.Sqrt(p))))
			}
		}
	case LimitCPU:
		// Not -l: wireperf already writes 1 MiB blocks by default, and
		// advise measured with them.
		a.Steps = append(a.Steps, fmt.Sprintf("the %s is CPU-bound: spread the work with -P %d (more cores), or use a faster host",
			v.Host, max(2, streamsFor(ideal, single))))
		a.ExpectedBps = e.Multi.goodput()
	case LimitApplication:
		a.Steps = append(a.Steps, "the sender did not keep the connection busy: remove any -b rate, or feed it data faster")
	case LimitNetwork:
		a.Steps = append(a.Steps, fmt.Sprintf("nothing to tune on the hosts: one stream gets %s of %s", rate(single), rate(ideal)))
		a.ExpectedBps = single
		if st := e.Single.Steady; st != nil && st.RateBps > single && fullAfterSlowStart(signalsOf(e)) {
			// The path is full after slow start: the test's mean is low
			// only by slow start's share, which a longer test shrinks.
			a.Steps[len(a.Steps)-1] = fmt.Sprintf("nothing to tune on the hosts: after slow start one stream holds %s of %s; "+
				"the %.0f s test's mean, %s, includes slow start, and a longer test reads closer to the steady rate", rate(st.RateBps), rate(ideal), e.Single.Seconds, rate(single))
			a.ExpectedBps = st.RateBps
		}
		if tcp := e.Single.TCP; tcp != nil && tcp.BufferDelayPercent != nil && *tcp.BufferDelayPercent > 100 &&
			us(tcp.MeanRTTus)-us(tcp.BaselineRTTus) >= 5*time.Millisecond {
			a.Notes = append(a.Notes, fmt.Sprintf("The RTT rose from %s to %s under load (Buffer Delay %.0f%%): the bottleneck's queue is deep. "+
				"An AQM there (fq_codel, cake) or BBR keeps it short.", ms(us(tcp.BaselineRTTus)), ms(us(tcp.MeanRTTus)), *tcp.BufferDelayPercent))
		}
	case LimitUnknown:
		if e.LowerBound != "" {
			a.Steps = append(a.Steps, fmt.Sprintf("the path's capacity is unknown above %s: rerun with the hosts otherwise idle (nothing else using their CPU), or give --bottleneck RATE", rate(e.Bottleneck)))
			break
		}
		fallthrough
	default:
		a.Steps = append(a.Steps, "not enough TCP_INFO to tell (is the sender Linux?)")
	}
	if !e.BottleneckGiven && !e.FromTrain && e.Multi.WindowLimited() {
		a.Notes = append(a.Notes, fmt.Sprintf("The bottleneck was estimated from the best multi-stream test (%s), whose streams were window-limited too: "+
			"the path may be faster. Give --bottleneck RATE for a firmer verdict.", units.Count(e.Multi.Streams, "stream")))
	}
	return a
}

// SenderCongestion is the congestion control the sender's data socket
// ran: what the socket reported, else the host's default; "" unknown.
// Only the sender's matters: the receiver's decides nothing for the data.
func (e Evidence) SenderCongestion() string {
	if s := e.Sender.Socket; s != nil && s.Congestion != "" {
		return s.Congestion
	}
	if l := e.Sender.Limits; l != nil {
		return l.Congestion
	}
	return ""
}

// isBBR reports whether a congestion control is BBR (bbr, bbr2, bbr3).
func isBBR(cc string) bool { return strings.HasPrefix(strings.ToLower(cc), "bbr") }

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

// omitFor is the -O, in whole seconds, that covers slow start: when it
// ended, or else how long it takes to open a window of bdp; 0 when
// neither is known.
func omitFor(ss *figures.SlowStartFigures, bdp float64, rtt time.Duration, mtu int) int {
	switch {
	case ss != nil && ss.Ended && ss.End > 0:
		return int(math.Ceil(ss.End))
	case rtt > 0 && bdp > 0:
		return max(1, int(math.Ceil(slowStartSeconds(bdp, rtt, mtu))))
	}
	return 0
}

// slowStartSeconds is how long slow start takes to open a window of bdp
// from the initial ten segments, doubling every RTT.
func slowStartSeconds(bdp float64, rtt time.Duration, mtu int) float64 {
	mss := float64(mtuOr(mtu) - figures.TCPIPHeaderBytes)
	return math.Ceil(math.Log2(max(bdp/(10*mss), 1))) * rtt.Seconds()
}

// slowStartNote says how long slow start takes at this RTT.
func slowStartNote(bdp float64, rtt time.Duration, mtu int) string {
	secs := slowStartSeconds(bdp, rtt, mtu)
	return fmt.Sprintf("Slow start needs about %.0f RTTs (%.1f s at %s) to open a window of %s, and a test reads low until it has: "+
		"test for much longer than that to see the steady rate.", secs/rtt.Seconds(), secs, ms(rtt), size(bdp))
}

// SlowStart is a single-stream measurement's slow-start figures; nil
// without a timeline.
func (r *Measurement) SlowStart() *figures.SlowStartFigures {
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
		return figures.DefaultMTU
	}
	return mtu
}
