package measure

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wireperf/wireperf/internal/spec"
)

// The --rcv-timeout bounds, as iperf3's (MIN_NO_MSG_RCVD_TIMEOUT,
// MAX_TIME) and its default (DEFAULT_NO_MSG_RCVD_TIMEOUT).
const (
	DefaultRcvTimeout = 120 * time.Second
	MinRcvTimeout     = 100 * time.Millisecond
	MaxRcvTimeout     = 24 * time.Hour
)

// NoCPU is an affinity not asked for (-A not given, or -A n without ,m).
const NoCPU = -1

// KeepAlive is --cntl-ka: TCP keepalive on the control connection.
// A zero Idle, Interval or Count keeps the system's value.
type KeepAlive struct {
	On       bool
	Idle     time.Duration // TCP_KEEPIDLE
	Interval time.Duration // TCP_KEEPINTVL
	Count    int           // TCP_KEEPCNT
}

// String is the flag's value as given.
func (k *KeepAlive) String() string {
	if !k.On {
		return ""
	}
	part := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return strconv.Itoa(int(d / time.Second))
	}
	count := ""
	if k.Count != 0 {
		count = strconv.Itoa(k.Count)
	}
	return strings.TrimRight(part(k.Idle)+"/"+part(k.Interval)+"/"+count, "/")
}

// Type names the value in help.
func (*KeepAlive) Type() string { return "KEEPIDLE/KEEPINTV/KEEPCNT" }

// Set reads iperf3's KEEPIDLE/KEEPINTV/KEEPCNT ("/", what --cntl-ka alone
// sets, keeps every part the system's): seconds, seconds and a
// count, each optional; the idle time must exceed the probes' span, as
// iperf3 requires.
func (k *KeepAlive) Set(s string) error {
	parts := strings.Split(s, "/")
	if len(parts) > 3 {
		return fmt.Errorf("%q: want KEEPIDLE/KEEPINTV/KEEPCNT", s)
	}
	var n [3]int
	for i, p := range parts {
		if p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return fmt.Errorf("%q: want KEEPIDLE/KEEPINTV/KEEPCNT, each a positive whole number", s)
		}
		n[i] = v
	}
	if n[0] != 0 && n[0] <= n[1]*n[2] {
		return fmt.Errorf("%q: the idle time must be longer than KEEPINTV x KEEPCNT", s)
	}
	*k = KeepAlive{On: true, Idle: time.Duration(n[0]) * time.Second, Interval: time.Duration(n[1]) * time.Second, Count: n[2]}
	return nil
}

// finishIperf3Habits checks the iperf3 flags once -l and -u are known.
func (c *Client) finishIperf3Habits(fs *pflag.FlagSet) error {
	s := &c.Spec
	if c.IPv4 && c.IPv6 {
		return errors.New("-4 and -6: choose one")
	}
	if fs.Changed("blockcount") {
		if fs.Changed("time") || s.Bytes != 0 { // iperf3's rule: -n 0 is no end condition
			return errors.New("-k: only one test end condition (-t, -n, -k) may be specified")
		}
		if s.Blocks > 0 {
			s.Bytes = s.Blocks * int64(s.Length)
			s.Duration = 0 // as -n alone: run until the blocks are sent
		}
	}
	if err := c.parseAffinity(); err != nil {
		return err
	}
	if s.DontFragment && s.Protocol != spec.UDP {
		return errors.New("--dont-fragment applies to UDP tests (-u)")
	}
	if c.FlowLabel != "" {
		v, err := strconv.ParseInt(c.FlowLabel, 0, 64)
		if err != nil || v < 1 || v > spec.MaxFlowLabel {
			return fmt.Errorf("-L %s: want a flow label from 1 to 0xfffff", c.FlowLabel)
		}
		if c.IPv4 {
			return errors.New("-L: a flow label is IPv6's; it cannot go with -4")
		}
		if s.Protocol == spec.UDP {
			return errors.New("-L: iperf3 labels TCP data connections only; it cannot go with -u")
		}
		s.FlowLabel = int(v)
	}
	if err := c.finishFile(fs); err != nil {
		return err
	}
	if fs.Changed("rcv-timeout") {
		if !s.ServerSends() {
			return errors.New("--rcv-timeout: the client receives only with -R or --bidir")
		}
	}
	s.SndTimeout = time.Duration(c.SndTimeoutMS) * time.Millisecond // spec.Validate checks it
	c.RcvTimeout = time.Duration(c.RcvTimeoutMS) * time.Millisecond
	if c.RcvTimeout < MinRcvTimeout || c.RcvTimeout > MaxRcvTimeout {
		return fmt.Errorf("--rcv-timeout %d: want %d to %d ms", c.RcvTimeoutMS, MinRcvTimeout.Milliseconds(), MaxRcvTimeout.Milliseconds())
	}
	return nil
}

// finishFile checks -F. wireperf reads and writes the file on a single
// TCP stream. As in iperf3, a sender without -t, -n or -k sends the
// file once: the test ends on its size.
func (c *Client) finishFile(fs *pflag.FlagSet) error {
	s := &c.Spec
	if c.File == "" {
		return nil
	}
	switch {
	case s.Protocol == spec.UDP:
		return errors.New("-F: a file travels over TCP here; it cannot go with -u")
	case s.Bidir || s.Streams > 1:
		return errors.New("-F: a file travels over one stream; it cannot go with -P or --bidir")
	case s.ZeroCopy:
		return errors.New("-F and -Z: choose one (-Z sends no file's bytes)")
	case s.TripTimes:
		return errors.New("-F and --trip-times: choose one (the stamps would overwrite the file's bytes)")
	}
	if s.ClientSends() && !fs.Changed("time") && !fs.Changed("bytes") && !fs.Changed("blockcount") {
		if fi, err := os.Stat(c.File); err == nil && fi.Size() > 0 {
			s.Bytes, s.Duration = fi.Size(), 0
		}
	}
	return nil
}

// parseAffinity reads -A n[,m] as iperf3 does: CPUs 0 to 1024.
func (c *Client) parseAffinity() error {
	c.ClientCPU, c.ServerCPU = NoCPU, NoCPU
	if c.Affinity == "" {
		return nil
	}
	bad := fmt.Errorf("-A %s: want n or n,m, CPU numbers from 0 to 1024", c.Affinity)
	client, server, both := strings.Cut(c.Affinity, ",")
	n, err := strconv.ParseInt(client, 0, 32)
	if err != nil || n < 0 || n > 1024 {
		return bad
	}
	c.ClientCPU = int(n)
	if both {
		m, err := strconv.Atoi(server)
		if err != nil || m < 0 || m > 1024 {
			return bad
		}
		c.ServerCPU = m
	}
	return nil
}

// Family is "4" with -4, "6" with -6 and "" without either: what
// narrows "tcp" and "udp" to one family (netsetup.Client.Family).
func (c *Client) Family() string {
	switch {
	case c.IPv4:
		return "4"
	case c.IPv6:
		return "6"
	}
	return ""
}
