// Package tcpconnect measures the TCP handshake to a host:port, as
// perfSONAR's and blackbox_exporter's tcp-connect probes do: each attempt
// is a connect that is closed at once, timed from the SYN to the
// handshake's end, or counted as refused (a reset), timed out, or failed
// otherwise. The host needs to run nothing of wireperf's. Where the kernel
// timed the handshake (Linux's TCP_INFO after the connect: its RTT sample
// from the SYN's transmission to the SYN-ACK's arrival) that is the
// handshake's time, and a dial that returned later than that by more than a
// host's scheduling names the client as the host that delayed it.
package tcpconnect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
	"github.com/wireperf/wireperf/internal/tcpconnect/connectplan"
	"github.com/wireperf/wireperf/internal/tcpinfo"
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
	// µs: the kernel's for the KernelTimed of them it timed, the dial's
	// (UserSpace) for the rest.
	Connect     result.Percentiles `json:"connect_us"`
	KernelTimed int                `json:"kernel_timed"`
	// UserSpace is the same attempts timed from before the dial to its
	// return: the handshake plus this host's socket setup and scheduling.
	UserSpace result.Percentiles `json:"connect_user_us"`
	// HostDelay is set when dials returned later than the kernel's
	// handshake by more than a host's scheduling.
	HostDelay *HostDelay `json:"host_delay,omitempty"`
}

// HostDelay says that the client host, not the network, took part of some
// attempts' user-space times: their dial returned after the kernel's
// handshake by more than the dial's own cost (DialCostUs, the least it
// took over the run: socket setup, the poller) plus ThresholdUs
// (stats.HostDelayed of the smallest kernel handshake time).
type HostDelay struct {
	Host       string  `json:"host"`         // result.RoleClient
	Attempts   int     `json:"attempts"`     // attempts so delayed
	ShareUs    float64 `json:"share_us"`     // the most the host added to one, past the dial's cost
	DialCostUs float64 `json:"dial_cost_us"` // the least a dial took past the kernel's handshake
	// UserMaxUs is UserSpace's max as printed; WithoutUs the user-space
	// max over the attempts the host did not delay (nil when it delayed
	// every one).
	UserMaxUs   float64  `json:"user_max_us"`
	WithoutUs   *float64 `json:"without_host_delayed_us,omitempty"`
	ThresholdUs float64  `json:"host_delayed_us"`
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

// timing is one connected attempt's times: user from before the dial to
// its return, kernel the kernel's handshake time (0: not known).
type timing struct{ user, kernel time.Duration }

// tally counts the attempts' outcomes and keeps the connected ones' times
// (at most MaxCount), for the host-delay threshold that needs them all.
type tally struct {
	mu    sync.Mutex
	times []timing
	r     Result
}

func newTally() *tally { return &tally{} }

// add records one attempt: how it ended, and its times when it
// connected.
func (t *tally) add(o Outcome, tm timing, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.r.Attempts++
	switch o {
	case Connected:
		t.r.Connected++
		t.times = append(t.times, tm)
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

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Hour), 3) }

func (t *tally) fill(r *Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r.Attempts, r.Connected, r.Refused, r.TimedOut, r.Failed, r.LastError =
		t.r.Attempts, t.r.Connected, t.r.Refused, t.r.TimedOut, t.r.Failed, t.r.LastError
	r.Connect, r.UserSpace, r.KernelTimed, r.HostDelay = summarize(t.times)
}

// summarize gives the handshake times (the kernel's where known), the
// user-space times, how many the kernel timed, and the client's host
// delay: attempts whose dial returned after the kernel's handshake by
// more than the dial's least cost plus stats.HostDelayed of the smallest
// kernel time.
func summarize(times []timing) (handshake, user result.Percentiles, kernelTimed int, hd *HostDelay) {
	hs, us, clean := newHist(), newHist(), newHist()
	minKernel := time.Duration(-1)
	for i, tm := range times {
		// The kernel's time can't exceed the dial's, which began before
		// the SYN and returned after the SYN-ACK: a larger one is not this
		// handshake's (a zero-µs sample reads as a jiffy).
		if tm.kernel > tm.user {
			times[i].kernel, tm.kernel = 0, 0
		}
		us.RecordValue(max(int64(tm.user), 1))
		v := tm.user
		if tm.kernel > 0 {
			v = tm.kernel
			kernelTimed++
			if minKernel < 0 || tm.kernel < minKernel {
				minKernel = tm.kernel
			}
		}
		hs.RecordValue(max(int64(v), 1))
	}
	handshake, user = stats.Summarize(hs, 1), stats.Summarize(us, 1)
	if kernelTimed == 0 {
		return handshake, user, 0, nil
	}
	// The dial's own cost is in every attempt's time: the least it took
	// past the kernel's handshake is the host's usual, not a delay.
	cost := time.Duration(-1)
	for _, tm := range times {
		if tm.kernel > 0 && (cost < 0 || tm.user-tm.kernel < cost) {
			cost = tm.user - tm.kernel
		}
	}
	limit := stats.HostDelayed(minKernel)
	d := &HostDelay{Host: result.RoleClient, UserMaxUs: user.Max, ThresholdUs: float64(limit) / 1e3, DialCostUs: float64(cost) / 1e3}
	for _, tm := range times {
		if share := tm.user - tm.kernel - cost; tm.kernel > 0 && share > limit {
			d.Attempts++
			d.ShareUs = max(d.ShareUs, float64(share)/1e3)
			continue
		}
		clean.RecordValue(max(int64(tm.user), 1))
	}
	if d.Attempts == 0 {
		return handshake, user, kernelTimed, nil
	}
	if clean.TotalCount() > 0 {
		m := stats.Summarize(clean, 1).Max
		d.WithoutUs = &m
	}
	return handshake, user, kernelTimed, d
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
			o, tm, err := attempt(ctx, addr, cfg.Timeout)
			if ctx.Err() != nil {
				return // cut short, not measured
			}
			t.add(o, tm, err)
		}()
	}
	wg.Wait()
	t.fill(&r)
	r.Ended = time.Now().UTC()
	return r, ctx.Err()
}

// attempt is one connect, closed as soon as it is made, with its times.
func attempt(ctx context.Context, addr string, timeout time.Duration) (Outcome, timing, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	began := time.Now()
	c, err := d.DialContext(ctx, "tcp", addr)
	tm := timing{user: time.Since(began)}
	if err == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			if info, ierr := tcpinfo.FromConn(tc); ierr == nil {
				tm.kernel = KernelHandshake(info)
			}
		}
		c.Close()
	}
	return Classify(err), tm, err
}

// KernelHandshake is the kernel's time for the handshake of a connection
// just made, from its TCP_INFO: Linux takes its first RTT sample from the
// SYN's transmission to the SYN-ACK's arrival, so min_rtt holds that
// exchange alone. 0 when the kernel has no such figure (not Linux, or no
// sample) or when the SYN was retransmitted: the sample is then the last
// SYN's (Karn's rule, or the echoed timestamp), not the whole wait, and the
// dial's time is the handshake's.
func KernelHandshake(info *tcpinfo.Info) time.Duration {
	if info == nil || info.TotalRetrans > 0 || info.MinRTTus == 0 || info.MinRTTus == ^uint32(0) {
		return 0
	}
	return time.Duration(info.MinRTTus) * time.Microsecond
}
