package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/pace"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/version"
)

// MaxClockProbes bounds the clock exchanges of one connection.
const MaxClockProbes = 64

// MaxStartAhead bounds how far ahead a start instant may be: the target's
// server waits only so long for a prepared test to start.
const MaxStartAhead = 8 * time.Second

// Agent serves controllers on a server started with --agent.
type Agent struct {
	// Keys are the controllers' keys (--agent-key-file); every controller
	// must prove it holds one.
	Keys auth.Keys
	// ClientCred, when set, is the key the agent proves to a receiver that
	// requires one (--client-key-file). It stays on this host: the
	// receiver's challenge is answered here, and no controller can send
	// or learn a key.
	ClientCred *auth.Credential
	// Timeout bounds each wait on a controller outside a running test,
	// and the set-up with the target.
	Timeout time.Duration
	Logger  *slog.Logger
	// Admit, when set, refuses a test this host should not run: the
	// server sets its own per-test limits here, so that a test an agent
	// runs is bounded as one it serves.
	Admit func(spec.Spec) error
	// AuthFailed, when set, hears of every controller that presented a
	// wrong key (the server slows such sources, and logs a summary
	// rather than a line per try); it says whether the try is worth a
	// log line of its own.
	AuthFailed func(peer net.Addr) (logIt bool)
}

func (a *Agent) timeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return 10 * time.Second
}

func (a *Agent) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// ServeConn serves one controller on a connection whose magic the server
// has read. past is called once the controller has authenticated, when
// the connection stops counting as a handshake.
func (a *Agent) ServeConn(ctx context.Context, conn net.Conn, past func()) {
	defer conn.Close()
	c := &agentConn{a: a, conn: conn, log: a.logger().With("peer", conn.RemoteAddr().String(), "role", "agent")}
	_ = conn.SetDeadline(time.Now().Add(a.timeout()))
	if err := ReadGreetingRest(conn); err != nil {
		c.log.Info("agent connection without a valid greeting", "err", err)
		return
	}
	if err := WriteGreeting(conn); err != nil {
		return
	}
	user, sess, err := c.authenticate()
	if err != nil {
		logIt := true
		if errors.Is(err, auth.ErrFailed) && a.AuthFailed != nil {
			logIt = a.AuthFailed(conn.RemoteAddr())
		}
		if logIt {
			c.log.Warn("controller refused", "err", err)
		}
		return
	}
	c.log = c.log.With("user", user)
	c.seal = newSealer(sess, true)
	if past != nil {
		past()
	}
	if err := c.serve(ctx); err != nil {
		c.log.Info("agent session ended", "err", err)
	}
}

type agentConn struct {
	a    *Agent
	conn net.Conn
	log  *slog.Logger
	wmu  sync.Mutex
	seal *sealer // every frame after the welcome, both ways
}

// send writes one frame within the timeout; the reader and the test may
// both send.
func (c *agentConn) send(t Type, v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.a.timeout()))
	if c.seal != nil {
		return c.seal.write(c.conn, t, v)
	}
	return WriteFrame(c.conn, t, v)
}

// read reads the controller's next frame, sealed once authenticated; a
// frame that fails its check ends the session.
func (c *agentConn) read(admit func(Type) error) (Frame, error) {
	if c.seal != nil {
		fr, err := c.seal.read(c.conn, admit)
		if errors.Is(err, ErrBadMAC) {
			c.log.Warn("controller frame refused: it failed its integrity check", "err", err)
			c.refuse(ErrBadMAC.Error())
		}
		return fr, err
	}
	return ReadFrame(c.conn, admit)
}

func (c *agentConn) refuse(msg string) { _ = c.send(TypeError, Error{Message: msg}) }

// only admits the listed frame types.
func only(types ...Type) func(Type) error {
	return func(t Type) error {
		for _, ok := range types {
			if t == ok {
				return nil
			}
		}
		return fmt.Errorf("unexpected %v", t)
	}
}

func (c *agentConn) authenticate() (string, *auth.Session, error) {
	nonce, err := auth.Nonce()
	if err != nil {
		return "", nil, err
	}
	if err := c.send(TypeChallenge, Challenge{Nonce: nonce}); err != nil {
		return "", nil, err
	}
	fr, err := ReadFrame(c.conn, only(TypeAuth))
	if err != nil {
		return "", nil, fmt.Errorf("no answer to the challenge: %w", err)
	}
	var m Auth
	if err := fr.Decode(&m); err != nil {
		return "", nil, err
	}
	key, ok := c.a.Keys.Verify(m.User, nonce, m.Nonce, m.MAC)
	if !ok {
		c.refuse(auth.ErrFailed.Error())
		return "", nil, fmt.Errorf("%w for user %q", auth.ErrFailed, m.User)
	}
	host, _ := os.Hostname()
	err = c.send(TypeWelcome, Welcome{
		MAC: auth.ServerProof(key, nonce, m.Nonce, m.User), Hostname: host,
		Version: version.String(), Clock: LocalClockSync(),
	})
	return m.User, &auth.Session{User: m.User, Key: key, ServerNonce: nonce, ClientNonce: m.Nonce}, err
}

// serve answers clock probes until the controller prepares a test.
func (c *agentConn) serve(ctx context.Context) error {
	for probes := 0; ; probes++ {
		_ = c.conn.SetReadDeadline(time.Now().Add(c.a.timeout()))
		fr, err := c.read(only(TypeClockRequest, TypePrepare))
		t2 := time.Now().UnixNano()
		if err != nil {
			return err
		}
		switch fr.Type {
		case TypeClockRequest:
			if probes >= MaxClockProbes {
				c.refuse(fmt.Sprintf("more than %d clock probes", MaxClockProbes))
				return errors.New("too many clock probes")
			}
			var q ClockRequest
			if err := fr.Decode(&q); err != nil {
				return err
			}
			if err := c.send(TypeClockReply, ClockReply{T1: q.T1, T2: t2, T3: time.Now().UnixNano()}); err != nil {
				return err
			}
		case TypePrepare:
			var p Prepare
			if err := fr.Decode(&p); err != nil {
				c.refuse(err.Error())
				return err
			}
			return c.runTest(ctx, p)
		}
	}
}

// runTest sets up the test with the target through its server's normal
// handshake, holds the streams until the start instant, and reports.
// Nothing is sent to the target before its server has accepted the test.
func (c *agentConn) runTest(ctx context.Context, p Prepare) error {
	if err := p.Spec.Validate(); err != nil {
		c.refuse(err.Error())
		return err
	}
	if c.a.Admit != nil {
		if err := c.a.Admit(p.Spec); err != nil {
			c.refuse(strings.Replace(err.Error(), "server refuses", "agent refuses", 1))
			return err
		}
	}
	host, portText, err := net.SplitHostPort(p.Target)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil || port < 1 || port > 65535 || host == "" {
		c.refuse(fmt.Sprintf("target %q: want HOST:PORT", p.Target))
		return fmt.Errorf("bad target %q", p.Target)
	}
	c.log.Info("preparing a test", "target", p.Target)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_ = c.conn.SetReadDeadline(time.Time{})
	startC := make(chan int64, 1)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		c.readDuringTest(startC, cancel)
	}()
	defer func() { _ = c.conn.SetReadDeadline(time.Unix(1, 0)); <-readerDone }()

	var gated bool
	gate := func(gctx context.Context) error {
		gated = true
		if err := c.send(TypePrepared, Prepared{}); err != nil {
			return err
		}
		timer := time.NewTimer(c.a.timeout())
		defer timer.Stop()
		var at int64
		select {
		case at = <-startC:
		case <-gctx.Done():
			return errors.New("stopped before the start")
		case <-timer.C:
			return errors.New("no start from the controller")
		}
		wait := time.Until(time.Unix(0, at))
		if wait > MaxStartAhead {
			return fmt.Errorf("start %v ahead, more than %v", wait.Round(time.Millisecond), MaxStartAhead)
		}
		if err := sleepUntil(gctx, at); err != nil {
			return errors.New("stopped before the start")
		}
		started := time.Now().UnixNano()
		return c.send(TypeStarted, Started{AtNs: started})
	}
	res, err := session.RunClient(ctx, session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: host, Port: port, Spec: p.Spec,
		ConnectTimeout: c.a.timeout(), Logger: c.log, Auth: c.a.ClientCred,
	}, StartGate: gate})
	if res == nil {
		// The controller hears only that the target refused: what the
		// port did (closed, silent, something else, a key refused) would
		// make the agent a port scanner for whoever holds its key. The
		// agent's own log has the reason.
		msg := fmt.Sprintf("test to %s: stopped: %v", p.Target, err)
		if !gated {
			msg = fmt.Sprintf("setting up the test with %s: refused by target (the agent's log on %s says why)", p.Target, agentHost())
			why := err.Error()
			if errors.Is(err, auth.ErrFailed) && c.a.ClientCred == nil {
				why += ": the receiver requires a key and this agent holds none (wireperf server --agent --client-key-file)"
			}
			c.log.Warn("the target refused the test", "target", p.Target, "reason", why)
		}
		c.refuse(msg)
		return errors.New(msg)
	}
	js, jerr := json.Marshal(res)
	if jerr != nil {
		c.refuse(jerr.Error())
		return jerr
	}
	rep := Report{Result: js}
	if err != nil {
		rep.Error = err.Error()
	}
	c.log.Info("test done", "target", p.Target, "err", rep.Error)
	return c.send(TypeReport, rep)
}

// agentHost names this host in messages to the controller.
func agentHost() string {
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "the agent"
}

// readDuringTest takes the controller's Start (once) and Stop; a lost
// controller stops the test as Stop would.
func (c *agentConn) readDuringTest(startC chan<- int64, stop context.CancelFunc) {
	admit := only(TypeStart, TypeStop)
	for {
		fr, err := c.read(admit)
		if err != nil {
			stop()
			return
		}
		switch fr.Type {
		case TypeStart:
			var s Start
			if err := fr.Decode(&s); err != nil {
				stop()
				return
			}
			startC <- s.AtNs
			admit = only(TypeStop)
		case TypeStop:
			stop()
			admit = only()
		}
	}
}

// sleepUntil waits until the wall clock reads at (ns since the epoch):
// pace's sleep-then-spin, so that the start is not late by a sleeping
// thread's timer slack.
func sleepUntil(ctx context.Context, at int64) error {
	// On the monotonic clock, so that the wait is exact unless the wall
	// clock is stepped meanwhile.
	due := time.Now().Add(time.Until(time.Unix(0, at)))
	p := pace.New(pace.Config{Interval: time.Hour})
	p.Start(due)
	if _, ok := p.Wait(ctx.Done()); !ok {
		return ctx.Err()
	}
	return nil
}
