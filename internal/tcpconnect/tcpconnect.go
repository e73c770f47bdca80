// Package tcpconnect measures the TCP handshake to a host:port, as
// perfSONAR's and blackbox_exporter's tcp-connect probes do: each attempt
// is a connect that is closed at once, timed from the SYN to the
// handshake's end, or counted as refused (a reset), timed out, or failed
// otherwise. The host needs to run nothing of wireperf's.
package tcpconnect

import (
	"context"
	"errors"
	"fmt"
	"github.com/wireperf/wireperf/internal/tcpconnect/connectplan"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// The settings of a run are its plan's (package connectplan), so that the
// model of a test reads them without the probes.
const (
	DefaultCount    = connectplan.DefaultCount
	DefaultInterval = connectplan.DefaultInterval
	DefaultTimeout  = connectplan.DefaultTimeout
	MaxCount        = connectplan.MaxCount
	MinInterval     = connectplan.MinInterval
)

// Config is one run's settings.
type Config = connectplan.Config

// DefaultConfig is the run's defaults.
func DefaultConfig() Config { return connectplan.DefaultConfig() }

// Result is what a run measured.
type Result struct {
	Target    string    `json:"target"` // HOST:PORT as given
	Addr      string    `json:"addr"`   // the address connected to
	Started   time.Time `json:"started"`
	Ended     time.Time `json:"ended"`
	Attempts  int       `json:"attempts"`
	Connected int       `json:"connected"`
	Refused   int       `json:"refused"`   // a reset answered the SYN
	TimedOut  int       `json:"timed_out"` // no answer within the timeout
	Failed    int       `json:"failed"`    // anything else (unreachable, say)
	// LastError is the last failure other than refused and timed out.
	LastError string `json:"last_error,omitempty"`
	// Connect is the handshake times of the attempts that connected, in
	// µs.
	Connect result.Percentiles `json:"connect_us"`
}

// Outcome is how one attempt ended.
type Outcome int

// The outcomes.
const (
	Connected Outcome = iota
	Refused
	TimedOut
	Failed
)

// Classify says how an attempt that returned err ended.
func Classify(err error) Outcome {
	var ne net.Error
	switch {
	case err == nil:
		return Connected
	case errors.Is(err, syscall.ECONNREFUSED):
		return Refused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT), errors.As(err, &ne) && ne.Timeout():
		return TimedOut
	}
	return Failed
}

// tally counts the attempts' outcomes.
type tally struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram
	r    Result
}

func newTally() *tally { return &tally{hist: hdrhistogram.New(1, int64(time.Hour), 3)} }

// add records one attempt: how it ended, and its handshake time when it
// connected.
func (t *tally) add(o Outcome, took time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.r.Attempts++
	switch o {
	case Connected:
		t.r.Connected++
		t.hist.RecordValue(max(int64(took), 1))
	case Refused:
		t.r.Refused++
	case TimedOut:
		t.r.TimedOut++
	default:
		t.r.Failed++
		if err != nil {
			t.r.LastError = err.Error()
		}
	}
}

func (t *tally) fill(r *Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Attempts, r.Connected, r.Refused, r.TimedOut, r.Failed, r.LastError =
		t.r.Attempts, t.r.Connected, t.r.Refused, t.r.TimedOut, t.r.Failed, t.r.LastError
	r.Connect = stats.Summarize(t.hist, 1)
}

// Run connects to target (HOST:PORT) cfg.Count times, cfg.Interval
// apart, and returns what it measured. The name is resolved once, before
// the first attempt, so that every attempt goes to one address and a
// resolver's time is no part of a handshake's. An error is one that let
// no attempt start (bad config or target, no address).
func Run(ctx context.Context, target string, cfg Config) (Result, error) {
	if err := cfg.Check(); err != nil {
		return Result{}, err
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return Result{}, fmt.Errorf("tcp-connect %q: want HOST:PORT: %v", target, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return Result{}, fmt.Errorf("tcp-connect %q: port %q: want 1 to 65535", target, port)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[cfg.Family], host)
	if err != nil || len(ips) == 0 {
		return Result{}, fmt.Errorf("tcp-connect %s: no address: %v", target, err)
	}
	ip := ips[0].Unmap()
	for _, a := range ips {
		if a.Unmap().Is4() {
			ip = a.Unmap()
			break
		}
	}
	addr := net.JoinHostPort(ip.String(), port)
	r := Result{Target: target, Addr: addr, Started: time.Now().UTC()}
	t := newTally()
	var wg sync.WaitGroup
	next := time.Now()
	for range cfg.Count {
		if d := time.Until(next); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
			timer.Stop()
		}
		if ctx.Err() != nil {
			break
		}
		next = next.Add(cfg.Interval)
		// An attempt may outlast the interval (a timeout of 3 s at 1 s
		// apart): attempts overlap, as a prober's do.
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, took, err := attempt(ctx, addr, cfg.Timeout)
			if ctx.Err() != nil {
				return // cut short, not measured
			}
			t.add(o, took, err)
		}()
	}
	wg.Wait()
	t.fill(&r)
	r.Ended = time.Now().UTC()
	return r, ctx.Err()
}

// attempt is one connect, closed as soon as it is made.
func attempt(ctx context.Context, addr string, timeout time.Duration) (Outcome, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	began := time.Now()
	c, err := d.DialContext(ctx, "tcp", addr)
	took := time.Since(began)
	if err == nil {
		c.Close()
	}
	return Classify(err), took, err
}
