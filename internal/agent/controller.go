package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/stats"
)

// Conn is a controller's connection to one agent.
type Conn struct {
	Addr    string
	Welcome Welcome
	conn    net.Conn
	timeout time.Duration
	wmu     sync.Mutex // Start and Stop may be sent while Wait reads
	seal    *sealer    // every frame after the welcome, both ways
}

// RefusedError is an agent's refusal or abort, in its own words.
type RefusedError struct {
	Addr    string
	Message string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("agent %s: %s", e.Addr, e.Message) }

// Dial connects to the agent at addr (host:port) and proves the key;
// the agent must prove it holds the key too.
func Dial(ctx context.Context, addr string, cred *auth.Credential, timeout time.Duration) (*Conn, error) {
	return DialWith(ctx, nil, addr, cred, timeout)
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// DialWith is Dial through dial (a net.Dialer's when nil): a controller
// inside a lab host dials from there.
func DialWith(ctx context.Context, dial DialFunc, addr string, cred *auth.Credential, timeout time.Duration) (*Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	nc, err := dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	c := &Conn{Addr: addr, conn: nc, timeout: timeout}
	stopWatch := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stopWatch()
	if err := c.handshake(cred); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) handshake(cred *auth.Credential) error {
	_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
	if err := WriteGreeting(c.conn); err != nil {
		return fmt.Errorf("agent %s: %w", c.Addr, err)
	}
	if err := ReadGreeting(c.conn); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrBadMagic) || errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("%s is not a wireperf agent (is it running wireperf server --agent?)", c.Addr)
		}
		return fmt.Errorf("agent %s: %w", c.Addr, err)
	}
	var ch Challenge
	if err := c.expect(TypeChallenge, &ch); err != nil {
		return err
	}
	nonce, err := auth.Nonce()
	if err != nil {
		return err
	}
	if err := c.send(TypeAuth, Auth{User: cred.User, Nonce: nonce, MAC: auth.ClientProof(cred.Key, ch.Nonce, nonce, cred.User)}); err != nil {
		return err
	}
	if err := c.expect(TypeWelcome, &c.Welcome); err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			return fmt.Errorf("agent %s: %w: it refused user %q or its key", c.Addr, auth.ErrFailed, cred.User)
		}
		return err
	}
	if !cred.CheckServerProof(ch.Nonce, nonce, c.Welcome.MAC) {
		return fmt.Errorf("agent %s: %w: it does not hold the key", c.Addr, auth.ErrFailed)
	}
	c.seal = newSealer(&auth.Session{User: cred.User, Key: cred.Key, ServerNonce: ch.Nonce, ClientNonce: nonce}, false)
	return nil
}

func (c *Conn) send(t Type, v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
	var err error
	if c.seal != nil {
		err = c.seal.write(c.conn, t, v)
	} else {
		err = WriteFrame(c.conn, t, v)
	}
	if err != nil {
		return fmt.Errorf("agent %s: %w", c.Addr, err)
	}
	return nil
}

// read reads the agent's next frame, sealed once authenticated.
func (c *Conn) read(admit func(Type) error) (Frame, error) {
	if c.seal != nil {
		return c.seal.read(c.conn, admit)
	}
	return ReadFrame(c.conn, admit)
}

// expect reads one frame of type want into v; the agent's error frame
// comes back as a *RefusedError.
func (c *Conn) expect(want Type, v any) error {
	fr, err := c.read(only(want, TypeError))
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("closed the connection")
		}
		return fmt.Errorf("agent %s: waiting for %v: %w", c.Addr, want, err)
	}
	if fr.Type == TypeError {
		var e Error
		if err := fr.Decode(&e); err != nil || e.Message == "" {
			e.Message = "an error without a reason"
		}
		return &RefusedError{Addr: c.Addr, Message: e.Message}
	}
	return fr.Decode(v)
}

// Offset is an agent's clock against the controller's: the agent's
// clock minus the controller's, within ± Uncertainty, and what each
// host's kernel says of its own clock.
type Offset struct {
	OffsetNs        int64     `json:"offset_ns"`
	UncertaintyNs   int64     `json:"uncertainty_ns"`
	Samples         int       `json:"samples"`
	AgentClock      ClockSync `json:"agent_clock"`
	ControllerClock ClockSync `json:"controller_clock"`
}

// MeasureClock runs n NTP-style exchanges and keeps the least-delay one
// (stats.EstimateOffset): its half round trip bounds the error.
func (c *Conn) MeasureClock(n int) (Offset, error) {
	n = max(1, min(n, MaxClockProbes))
	samples := make([]stats.OffsetSample, 0, n)
	_ = c.conn.SetReadDeadline(time.Now().Add(c.timeout))
	for range n {
		t1 := time.Now().UnixNano()
		if err := c.send(TypeClockRequest, ClockRequest{T1: t1}); err != nil {
			return Offset{}, err
		}
		var r ClockReply
		if err := c.expect(TypeClockReply, &r); err != nil {
			return Offset{}, err
		}
		t4 := time.Now().UnixNano()
		if r.T1 != t1 {
			return Offset{}, fmt.Errorf("agent %s: a clock reply to another probe", c.Addr)
		}
		samples = append(samples, stats.OffsetSample{T1: t1, T2: r.T2, T3: r.T3, T4: t4})
	}
	off, bound, ok := stats.EstimateOffset(samples)
	if !ok {
		return Offset{}, fmt.Errorf("agent %s: no usable clock sample (a clock stepped?)", c.Addr)
	}
	return Offset{OffsetNs: off, UncertaintyNs: bound, Samples: n,
		AgentClock: c.Welcome.Clock, ControllerClock: LocalClockSync()}, nil
}

// Prepare asks the agent to set a test up with its target; it returns
// once every stream is connected, or with the agent's reason.
func (c *Conn) Prepare(p Prepare) error {
	if err := c.send(TypePrepare, p); err != nil {
		return err
	}
	// The agent dials the target and may wait out the connect timeout.
	_ = c.conn.SetReadDeadline(time.Now().Add(3 * c.timeout))
	var ok Prepared
	return c.expect(TypePrepared, &ok)
}

// Start names the start instant on the agent's clock.
func (c *Conn) Start(atNs int64) error { return c.send(TypeStart, Start{AtNs: atNs}) }

// Stop asks the agent to stop its test now.
func (c *Conn) Stop(reason string) error { return c.send(TypeStop, Stop{Reason: reason}) }

// Outcome is what an agent reported of its test.
type Outcome struct {
	StartedAtNs int64 // on the agent's clock; 0 when it never started
	Report      Report
}

// Wait reads the agent's Started and Report, giving up after within.
func (c *Conn) Wait(within time.Duration) (Outcome, error) {
	var out Outcome
	_ = c.conn.SetReadDeadline(time.Now().Add(within))
	for {
		fr, err := c.read(only(TypeStarted, TypeReport, TypeError))
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("closed the connection")
			}
			return out, fmt.Errorf("agent %s: %w", c.Addr, err)
		}
		switch fr.Type {
		case TypeStarted:
			var s Started
			if err := fr.Decode(&s); err != nil {
				return out, err
			}
			out.StartedAtNs = s.AtNs
		case TypeReport:
			return out, fr.Decode(&out.Report)
		case TypeError:
			var e Error
			_ = fr.Decode(&e)
			return out, &RefusedError{Addr: c.Addr, Message: e.Message}
		}
	}
}

// Close closes the connection; an agent with a test still to start
// abandons it.
func (c *Conn) Close() error { return c.conn.Close() }
