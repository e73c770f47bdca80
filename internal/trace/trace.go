// Package trace discovers the path to a host, as traceroute does: probes
// of increasing TTL (UDP datagrams to an unlikely port, or ICMP echo
// requests), each router on the way answering with an ICMP time
// exceeded, and the destination with a port unreachable or an echo
// reply. A path is what a mesh records beside its throughput, so that a
// throughput drop can be told apart from a route change.
//
// By default it needs no privilege, as tracepath: the probes go out of
// an ordinary UDP socket (or an ICMP ping socket) with IP_RECVERR, and
// the kernel hands the ICMP errors they cause to that socket's error
// queue. Config.Raw reads ICMP through a raw socket instead, which needs
// root (or CAP_NET_RAW). It runs on Linux; elsewhere Run says so in one
// line.
package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/trace/traceplan"
)

// The trace a user asks for is traceplan's, so that the model of a test
// (internal/measure) describes one without this package's sockets.
type (
	Proto  = traceplan.Proto
	Config = traceplan.Config
)

// The probes, defaults and limits (traceplan's).
const (
	UDP                 = traceplan.UDP
	ICMP                = traceplan.ICMP
	DefaultMaxHops      = traceplan.DefaultMaxHops
	DefaultProbes       = traceplan.DefaultProbes
	DefaultProbeTimeout = traceplan.DefaultProbeTimeout
	MaxHopsLimit        = traceplan.MaxHopsLimit
	MaxProbesLimit      = traceplan.MaxProbesLimit
	BasePort            = traceplan.BasePort
)

// ParseProto reads a probe's name.
func ParseProto(s string) (Proto, error) { return traceplan.ParseProto(s) }

// DefaultConfig is a UDP trace of 30 hops, 3 probes a hop, a second each.
func DefaultConfig() Config { return traceplan.DefaultConfig() }

// MaxProbeRate bounds the probes a trace sends a second, whatever its
// flags: --probes 10 --max-hops 64 --probe-timeout 1ms sent 550 probes
// in 0.1 s. At this rate a trace at its largest (640 probes) takes 6.4 s
// at least, and the default one (90) 0.9 s.
const MaxProbeRate = 100

// pacer spaces a trace's probes at least gap apart. Its clock and its
// sleep are given, so the spacing is tested exactly.
type pacer struct {
	gap   time.Duration
	next  time.Time
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

func newPacer() *pacer {
	return &pacer{gap: time.Second / MaxProbeRate, now: time.Now, sleep: sleepCtx}
}

// wait returns when the next probe may go, or with ctx's error.
func (p *pacer) wait(ctx context.Context) error {
	now := p.now()
	if d := p.next.Sub(now); d > 0 {
		if err := p.sleep(ctx, d); err != nil {
			return err
		}
		now = p.next
	}
	p.next = now.Add(p.gap)
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hop is one TTL's answers.
type Hop struct {
	TTL int `json:"ttl"`
	// Addr is the address that answered (the first, when the probes'
	// answers came from several); "" when none did.
	Addr string `json:"addr,omitempty"`
	// RTTs are each probe's round-trip time in milliseconds, NaN for a
	// probe not answered (null in JSON).
	RTTs []float64 `json:"-"`
	// Reached says the answer came from the destination.
	Reached bool `json:"reached,omitempty"`
}

// hopJSON writes a lost probe's RTT as null.
type hopJSON struct {
	TTL     int        `json:"ttl"`
	Addr    string     `json:"addr,omitempty"`
	RTTs    []*float64 `json:"rtts_ms"`
	Reached bool       `json:"reached,omitempty"`
}

// MarshalJSON writes a lost probe's RTT as null.
func (h Hop) MarshalJSON() ([]byte, error) {
	j := hopJSON{TTL: h.TTL, Addr: h.Addr, Reached: h.Reached, RTTs: make([]*float64, len(h.RTTs))}
	for i, r := range h.RTTs {
		if !math.IsNaN(r) {
			j.RTTs[i] = &r
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a null RTT as NaN.
func (h *Hop) UnmarshalJSON(b []byte) error {
	var j hopJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*h = Hop{TTL: j.TTL, Addr: j.Addr, Reached: j.Reached, RTTs: make([]float64, len(j.RTTs))}
	for i, r := range j.RTTs {
		h.RTTs[i] = math.NaN()
		if r != nil {
			h.RTTs[i] = *r
		}
	}
	return nil
}

// Report is a trace's result.
type Report struct {
	Target  string    `json:"target"` // as given
	Addr    string    `json:"addr"`   // the address traced to
	Proto   Proto     `json:"proto"`
	Raw     bool      `json:"raw,omitempty"` // read through a raw ICMP socket
	MaxHops int       `json:"max_hops"`
	Probes  int       `json:"probes"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Reached bool      `json:"reached"`
	Hops    []Hop     `json:"hops"`
	// Note says why the trace stopped short: its time bound.
	Note string `json:"note,omitempty"`
}

// None is a hop that did not answer, in a path.
const None = traceplan.None

// Path is the path's identity: each hop's answering address in order,
// None for a hop that did not answer, without the silent hops after the
// last one that answered (a trace that never reaches its destination
// runs into MaxHops of them).
func (r Report) Path() []string {
	out := make([]string, 0, len(r.Hops))
	for _, h := range r.Hops {
		if h.Addr == "" {
			out = append(out, None)
		} else {
			out = append(out, h.Addr)
		}
	}
	for len(out) > 0 && out[len(out)-1] == None {
		out = out[:len(out)-1]
	}
	return out
}

// A path's identity and change are the plan's (package traceplan), so
// that the archive reads them without the probes.
var (
	PathKey      = traceplan.PathKey
	ParsePathKey = traceplan.ParsePathKey
	Changed      = traceplan.Changed
)

// Document is the trace's JSON output: {"trace": report}, or {"error":
// why} (with the report so far, if any).
type Document struct {
	Trace *Report `json:"trace,omitempty"`
	Error string  `json:"error,omitempty"`
}

// ErrNotTrace is a JSON document that is not a trace's.
var ErrNotTrace = errors.New("not a trace document")

// ParseDocument reads a trace's JSON output.
func ParseDocument(doc []byte) (Document, error) {
	var d Document
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&d); err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrNotTrace, err)
	}
	if d.Trace == nil && d.Error == "" {
		return Document{}, fmt.Errorf("%w: no trace or error", ErrNotTrace)
	}
	return d, nil
}

// IsDocument says doc is a trace's output.
func IsDocument(doc []byte) bool {
	_, err := ParseDocument(doc)
	return err == nil
}

// WriteText writes the report as traceroute does: a header line, then a
// line per hop with its address and each probe's RTT, "*" for a probe
// not answered.
func WriteText(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "trace to %s (%s), %d hops max, %d %s probes\n", r.Target, r.Addr, r.MaxHops, r.Probes, r.Proto)
	for _, h := range r.Hops {
		fmt.Fprintf(&b, "%2d  ", h.TTL)
		if h.Addr == "" {
			b.WriteString("*")
		} else {
			b.WriteString(h.Addr)
		}
		for _, rtt := range h.RTTs {
			if math.IsNaN(rtt) {
				b.WriteString("  *")
			} else {
				fmt.Fprintf(&b, "  %.3f ms", rtt)
			}
		}
		b.WriteString("\n")
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "%s\n", r.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
