// Package control is the control channel every native test uses, on both
// ends: the greeting and the key, the test request and its admission (the
// server's Accept, the client's Connect), and the framing state machine
// through which each end reads the other's frames until the test ends.
// What runs over it once a test is admitted belongs to the test's kind:
// internal/session for a bulk test, internal/rr/rrcontrol for a
// request-response one. A server that answers as iperf3 does is detected
// and reported here (*Iperf3ServerError); what to do about it is the
// caller's decision.
package control

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// ctlState is where one end of a control connection stands. Each state
// admits a few frame types from the peer; any other frame is a protocol
// error, and the connection is closed with the reason. docs/protocol-states.md
// draws the machine.
type ctlState uint8

// The server's states, then the client's.
const (
	srvAwaitAuth    ctlState = iota + 1 // key required: the client's answer to the challenge
	srvAwaitRequest                     // the test request
	srvSetup                            // admitted; data connections arrive; then Start
	srvRunning                          // data moves; the client may Stop, report its senders done, and report
	srvStopped                          // the client said Stop
	srvEnded                            // the client's final report is in: nothing more is expected

	cliAwaitAuth   // key sent for: the server's challenge
	cliAwaitAuthOK // answer sent: the server's proof, or a refusal
	cliAwaitAccept // request sent: accept or refusal
	cliAwaitReady  // data connections opened: streams-ready or refusal
	cliRunning     // the server's intervals, senders done and final report
	cliEnded       // the server's final report is in
	cliDone        // the server's own report (server-output) is in too

	// A request-response test (internal/rr/rrcontrol) branches off the
	// main line once it is accepted (see branches): the client compares
	// clocks over the connection before and during the test, and neither
	// end reports intervals or senders done.
	srvRRSetup      // admitted: clock requests, then Start
	srvRRRunning    // clock requests, Stop, or the client's report after the server's
	srvRRStopped    // the client said Stop: its report
	cliRRAwaitReady // data path opened: streams-ready or refusal
	cliRRRunning    // clock replies, and the server's final report

	ctlClosed // an error frame, a protocol error or a lost connection
)

var ctlStateNames = map[ctlState]string{
	srvAwaitAuth: "awaiting authentication", srvAwaitRequest: "awaiting the test request",
	srvSetup: "setting up", srvRunning: "running", srvStopped: "stopped", srvEnded: "ended",
	cliAwaitAuth: "awaiting the challenge", cliAwaitAuthOK: "awaiting the server's proof",
	cliAwaitAccept: "awaiting acceptance", cliAwaitReady: "awaiting streams-ready",
	cliRunning: "running", cliEnded: "ended", cliDone: "done",
	srvRRSetup: "setting up rr", srvRRRunning: "running rr", srvRRStopped: "stopped rr",
	cliRRAwaitReady: "awaiting rr streams-ready", cliRRRunning: "running rr",
	ctlClosed: "closed",
}

func (s ctlState) String() string { return ctlStateNames[s] }

// transitions is the machine: in a state, the frames a peer may send and
// the state each leads to. An error frame is admitted everywhere and
// closes. SenderDone keeps the state but is admitted once (see read).
var transitions = map[ctlState]map[proto.Type]ctlState{
	srvAwaitAuth:    {proto.TypeAuth: srvAwaitRequest},
	srvAwaitRequest: {proto.TypeTestRequest: srvSetup},
	srvSetup:        {proto.TypeStart: srvRunning},
	srvRunning:      {proto.TypeStop: srvStopped, proto.TypeSenderDone: srvRunning, proto.TypeEndReport: srvEnded},
	srvStopped:      {proto.TypeSenderDone: srvStopped, proto.TypeEndReport: srvEnded},
	srvEnded:        {},
	cliAwaitAuth:    {proto.TypeChallenge: cliAwaitAuthOK},
	cliAwaitAuthOK:  {proto.TypeAuthOK: cliAwaitAccept},
	cliAwaitAccept:  {proto.TypeTestAccept: cliAwaitReady},
	cliAwaitReady:   {proto.TypeStreamsReady: cliRunning},
	cliRunning:      {proto.TypeInterval: cliRunning, proto.TypeSenderDone: cliRunning, proto.TypeEndReport: cliEnded},
	cliEnded:        {proto.TypeServerOutput: cliDone},
	cliDone:         {},
	srvRRSetup:      {proto.TypeClockRequest: srvRRSetup, proto.TypeStart: srvRRRunning},
	srvRRRunning:    {proto.TypeClockRequest: srvRRRunning, proto.TypeStop: srvRRStopped, proto.TypeEndReport: srvEnded},
	srvRRStopped:    {proto.TypeEndReport: srvEnded},
	cliRRAwaitReady: {proto.TypeStreamsReady: cliRRRunning},
	cliRRRunning:    {proto.TypeClockReply: cliRRRunning, proto.TypeEndReport: cliEnded},
	ctlClosed:       {},
}

// branches are where a request-response test leaves the main line: the
// request's content, not a frame type, decides it, so the end that read
// it takes the branch (branch).
var branches = map[ctlState]ctlState{
	srvSetup:      srvRRSetup,
	cliAwaitReady: cliRRAwaitReady,
}

// ProtocolError is a frame the state did not admit.
type ProtocolError struct {
	Got   proto.Type
	State ctlState
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("protocol error: unexpected %v while %v", e.Got, e.State)
}

// PeerError is the peer's error frame: a refusal or an abort.
type PeerError struct{ Message string }

func (e *PeerError) Error() string { return e.Message }

// controlConn reads one control connection through the state machine.
// The handshake reads it frame by frame (next); once a test is set up,
// readLoop reads it in the background and hands each kind of frame to its
// own channel. Every frame kind but Interval is admitted at most once, so
// one-slot channels never block the reader.
type controlConn struct {
	conn net.Conn

	mu         sync.Mutex
	state      ctlState
	senderDone bool // a SenderDone was admitted

	// Channels of the background reader.
	started     chan struct{}           // the client's Start (server side)
	stop        chan struct{}           // the client asked to stop (server side)
	intervals   chan result.Interval    // the server's interval reports (client side)
	end         chan result.End         // the peer's final report
	output      chan proto.ServerOutput // the server's own report (client side)
	peerErr     chan string             // the peer's error message
	senderDoneC chan map[int]int64      // the peer's senders have stopped
	clock       chan stats.OffsetSample // answers to the client's clock requests (client side)
	lost        chan error              // the connection failed or broke protocol

	// answerClock answers a clock request the moment it is read (server
	// side; at is when it arrived).
	answerClock func(q proto.ClockRequest, at time.Time) error
}

func newControlConn(conn net.Conn, initial ctlState) *controlConn {
	return &controlConn{conn: conn, state: initial}
}

// branch takes the request-response branch from where the connection
// stands; anywhere else it is a programming error.
func (c *controlConn) branch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	next, ok := branches[c.state]
	if !ok {
		panic(fmt.Sprintf("control: no request-response branch while %v", c.state))
	}
	c.state = next
}

// State is where the connection stands now.
func (c *controlConn) State() ctlState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// admit applies the machine to a frame type: the new state, or a protocol
// error (or the peer's error) that closes the connection.
func (c *controlConn) admit(t proto.Type) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t == proto.TypeError {
		c.state = ctlClosed
		return nil
	}
	next, ok := transitions[c.state][t]
	if ok && t == proto.TypeSenderDone {
		ok = !c.senderDone
		c.senderDone = true
	}
	if !ok {
		err := &ProtocolError{Got: t, State: c.state}
		c.state = ctlClosed
		return err
	}
	c.state = next
	return nil
}

// next reads one frame and moves the machine. The peer's error frame
// comes back as a *PeerError.
func (c *controlConn) next() (proto.Frame, error) {
	// The state admits or refuses the frame by its header: a refused body
	// is never read.
	fr, err := proto.ReadFrameIf(c.conn, c.admit)
	if err != nil {
		c.mu.Lock()
		c.state = ctlClosed
		c.mu.Unlock()
		return fr, err
	}
	if fr.Type == proto.TypeError {
		var e proto.Error
		if err := fr.Decode(&e); err != nil || e.Message == "" {
			e.Message = "the peer reported an error without a reason"
		}
		return fr, &PeerError{Message: e.Message}
	}
	return fr, nil
}

// expect reads one frame into v.
func (c *controlConn) expect(v any) error {
	fr, err := c.next()
	if err != nil {
		return err
	}
	return fr.Decode(v)
}

// readLoop starts the background reader. Interval frames are decoded only
// on the client, where they are expected; a client's interval is a
// protocol error before it is decoded.
func (c *controlConn) readLoop() {
	c.started = make(chan struct{}, 1)
	c.stop = make(chan struct{}, 1)
	c.intervals = make(chan result.Interval, 1024)
	c.end = make(chan result.End, 1)
	c.output = make(chan proto.ServerOutput, 1)
	c.peerErr = make(chan string, 1)
	c.senderDoneC = make(chan map[int]int64, 1)
	c.clock = make(chan stats.OffsetSample, clockBacklog)
	c.lost = make(chan error, 1)
	go c.loop()
}

func (c *controlConn) loop() {
	for {
		was := c.State()
		fr, err := c.next()
		at := time.Now()
		var pe *PeerError
		switch {
		case errors.As(err, &pe):
			c.peerErr <- pe.Message
			c.lost <- fmt.Errorf("peer error: %w", pe)
			return
		case errors.Is(err, io.EOF):
			c.lost <- errors.New("control connection closed")
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			c.lost <- fmt.Errorf("control connection silent while %v", was)
			return
		case err != nil:
			c.lost <- err
			return
		}
		switch fr.Type {
		case proto.TypeStart:
			_ = c.conn.SetReadDeadline(time.Time{}) // a test's length is the server clock's business
			c.started <- struct{}{}
		case proto.TypeStop:
			c.stop <- struct{}{}
		case proto.TypeInterval:
			var iv result.Interval
			if err := fr.Decode(&iv); err != nil {
				c.lost <- err
				return
			}
			select {
			case c.intervals <- iv:
			default: // a consumer that fell this far behind loses the live row, not the test
			}
		case proto.TypeSenderDone:
			var m proto.SenderDone
			if err := fr.Decode(&m); err != nil {
				c.lost <- err
				return
			}
			c.senderDoneC <- m.Sent
		case proto.TypeEndReport:
			var e result.End
			if err := fr.Decode(&e); err != nil {
				c.lost <- err
				return
			}
			c.end <- e
		case proto.TypeServerOutput:
			var o proto.ServerOutput
			if err := fr.Decode(&o); err != nil {
				c.lost <- err
				return
			}
			c.output <- o
		case proto.TypeClockRequest:
			var q proto.ClockRequest
			if err := fr.Decode(&q); err != nil {
				c.lost <- err
				return
			}
			if c.answerClock != nil {
				if err := c.answerClock(q, at); err != nil {
					c.lost <- err
					return
				}
			}
		case proto.TypeClockReply:
			var r proto.ClockReply
			if err := fr.Decode(&r); err != nil {
				c.lost <- err
				return
			}
			select {
			case c.clock <- stats.OffsetSample{T1: r.T1, T2: r.T2, T3: r.T3, T4: at.UnixNano()}:
			default: // an answer nobody waits for any more
			}
		}
	}
}

// clockBacklog is how many clock replies may wait for the client: it
// asks one at a time.
const clockBacklog = 4
