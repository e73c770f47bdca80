package advise

import (
	"fmt"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
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
	// CPUBusy percent of one core makes a host CPU-bound.
	CPUBusy = 90.0
	// IdleShare: a sender busy for less of the test than this had no
	// data to send (application-limited).
	IdleShare = 0.7
	// SlowStartShare of the test spent in slow start makes the test too
	// short to judge the path.
	SlowStartShare = 0.5
	// WindowReached: a stream at this share of window ÷ RTT ran at what
	// its window allows (figures.WindowReached, shared with the client's
	// report).
	WindowReached = figures.WindowReached
	// LossShare of the bytes sent retransmitted makes loss worth naming.
	LossShare = 0.001
	// PathFullShare of the ideal rate, held after slow start while
	// losing packets, is the bottleneck's rate: the losses cost the
	// stream at most the rest, framing arithmetic's tolerance.
	PathFullShare = 0.95
	// ProbeLossShare of the bytes sent after slow start is the most a
	// stream at the bottleneck's rate loses to its own probing of a full
	// queue (BBRv1 overfills a shallow queue every 8 round trips: 0.2-0.3%
	// on a 215 ms path with a 50 ms queue; CUBIC less). More is a lossy
	// path, whatever the rate.
	ProbeLossShare = 0.01
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
	Streams     int                       `json:"streams"`
	Seconds     float64                   `json:"seconds"`
	GoodputBps  float64                   `json:"goodput_bps"`
	SenderCPU   float64                   `json:"sender_cpu_percent"`
	ReceiverCPU float64                   `json:"receiver_cpu_percent"`
	TCP         *figures.DirectionFigures `json:"tcp,omitempty"`
	// Steady is the one stream's state after slow start (SteadyOf); nil
	// with several streams or without a timeline.
	Steady *Steady `json:"steady,omitempty"`
	Error  string  `json:"error,omitempty"`
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
		run.TCP = figures.DirectionOf(d, bottleneck)
	}
	run.Steady = steadyOf(r, senderRole)
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
	// FromTrain: Bottleneck is a packet train's capacity, a line rate
	// like a given one.
	FromTrain bool
	// LowerBound says why a measured Bottleneck is only a lower bound
	// (the host, not the path, paced the probe that would have measured
	// past the tests); "" when it is not. No verdict then says the path is
	// full.
	LowerBound string
	Single     Measurement
	Multi      *Measurement
	// PathDrops are the packets the path's router counted dropped in the
	// sender's direction, when it can tell (a lab's router); nil
	// otherwise.
	PathDrops *PathDrops
}

// PathDrops are a router's drops in one direction over the tests, by
// cause.
type PathDrops struct {
	Where string `json:"where"` // the router, e.g. "the lab's router"
	Queue uint64 `json:"queue"` // the bottleneck's queue was full
	Other uint64 `json:"other"` // random loss and the rest
}

// Ideal is the TCP goodput a full bottleneck gives: the line-rate
// arithmetic for a given rate, the measurement itself otherwise.
func (e Evidence) Ideal() float64 {
	if e.BottleneckGiven || e.FromTrain {
		return figures.LineRateGoodput(e.Bottleneck, e.MTU)
	}
	return e.Bottleneck
}

// BDP of the path, in bytes, at the bottleneck rate.
func (e Evidence) BDP() float64 { return figures.BDP(e.Bottleneck, e.BaselineRTT) }

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

// Classify decides what limits a single stream: the first of rules
// that holds names it.
func Classify(e Evidence) Verdict {
	c := signalsOf(e)
	v := Verdict{Limit: LimitUnknown, Reached: c.reached}
	if r := firstRule(c); r != nil {
		v.Limit = r.limit
		r.say(c, &v)
	}
	if d := e.PathDrops; d != nil {
		v.Details = append(v.Details, dropsDetail(d))
	}
	w, haveWindow := c.tcp.Window()
	if lt := c.lt; lt != nil {
		note := ""
		if v.Limit == LimitReceiverWindow || v.Limit == LimitSenderBuffer {
			if lt.Rwnd+lt.Sndbuf < 0.5 {
				note = " (" + figures.LimitedNote + ")"
			}
		}
		v.Details = append(v.Details, fmt.Sprintf("busy %.2f s: receiver window %s, sender buffer %s, network %s%s",
			float64(lt.BusyUs)/1e6, pct(lt.Rwnd), pct(lt.Sndbuf), pct(lt.Network), note))
	}
	if haveWindow && (v.Limit == LimitReceiverWindow || v.Limit == LimitSenderBuffer || w.Limited) {
		v.Details = append(v.Details, w.String())
	}
	return v
}

func (e Evidence) idealWhat() string {
	switch {
	case e.BottleneckGiven:
		return fmt.Sprintf("that %s gives (line-rate arithmetic at MTU %d)", rate(e.Bottleneck), mtuOr(e.MTU))
	case e.FromTrain:
		return fmt.Sprintf("that the %s a packet train arrived at gives (line-rate arithmetic at MTU %d)", rate(e.Bottleneck), mtuOr(e.MTU))
	}
	return "that several streams reached together"
}
