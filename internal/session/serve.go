package session

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/flowrun"
	"github.com/wireperf/wireperf/internal/netsetup"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpflow"
	"github.com/wireperf/wireperf/internal/units"
)

// ServeBulk runs an admitted bulk test (TCP or UDP streams) to its end
// and returns the server's record of it. Cancelling ctx aborts it and
// tells the client. live, when not nil, sees the test as it runs: Started
// once its streams are in, with the server's end as Local, and each of
// the server's intervals as it is sent to the client (the client's own
// never reach the server while it runs).
func ServeBulk(ctx context.Context, at *control.AdmittedTest, live Observer) (*result.Result, error) {
	if at.Request.Spec.Protocol == spec.RR {
		at.Abort("a request-response test is not a bulk test")
		return nil, errors.New("a request-response test handed to the bulk test's server")
	}
	t := &serverTest{AdmittedTest: at, ctx: ctx, live: live}
	res, err := t.run(at.Request.Client)
	for _, f := range t.flows {
		_ = f.Close()
	}
	return res, err
}

// serverTest is a bulk test (TCP or UDP streams) on the server: what
// every admitted test has, and the streams' side of it.
type serverTest struct {
	*control.AdmittedTest
	ctx   context.Context
	live  Observer
	flows []flowrun.Flow
	ev    control.Events
	// clockStopped says the server's own clock had to end the test, and
	// clientSpoke that the client said Stop or SenderDone at some point:
	// a client that was late but is there still gets its full ending.
	clockStopped, clientSpoke bool
}

func (t *serverTest) run(client result.Host) (*result.Result, error) {
	// The server's rows: the client's -i, or, when it asked for none (-i
	// 0), iperf3's server's own 1 s, as for an iperf3 client, whose -i
	// never reaches the server; the server's report joins them into its
	// own -i. The client hears none of them.
	runSpec := t.Request.Spec
	rowsToClient := runSpec.Interval > 0
	if !rowsToClient {
		runSpec.Interval = spec.DefaultInterval
	}
	res := &result.Result{Spec: runSpec, Token: t.Admission.Token.String(), StartedAt: time.Now()}
	res.Remote = result.End{Role: result.RoleClient, Host: client}
	// Read once: the end report carries the same limits.
	limits := netsetup.LimitsFor(t.Conn.LocalAddr().String())
	sendOutput := t.Request.ServerOutput && t.Config.ServerOutput != nil
	if err := t.Send(proto.TypeTestAccept, proto.TestAccept{
		Token: t.Admission.Token.String(), Server: flowrun.LocalHost(), Limits: limits, ServerOutput: sendOutput,
		StreamTOS: len(t.Request.Spec.StreamTOS) > 0,
	}); err != nil {
		return nil, err
	}
	// From here the client may only start, or hang up: the reader watches
	// the control connection while the data connections arrive, and the
	// set-up's own timers bound the wait, so that a client that is too
	// slow hears why.
	t.ev = t.Listen()
	sockets, err := t.collectStreams()
	if err == nil {
		err = t.awaitStart()
	}
	if err != nil {
		// Each write has its own deadline: the set-up's may have passed.
		_ = t.Send(proto.TypeError, proto.Error{Message: err.Error()})
		return nil, err
	}
	if tc := t.TCP(); tc != nil {
		_ = tc.SetKeepAlive(true)
		_ = tc.SetKeepAlivePeriod(5 * time.Second)
	}
	t.Log.Info("test started", "streams", t.Request.Spec.Streams, "reverse", t.Request.Spec.Reverse, "bidir", t.Request.Spec.Bidir, "duration", t.Request.Spec.Duration)

	var liveRes *result.Result
	roles := result.SenderRolesOf(t.Request.Spec)
	if t.live != nil {
		liveRes = t.liveStart(res, sockets)
		t.live.Started(liveRes)
	}
	run := flowrun.New(runSpec, t.flows, sockets, func(iv result.Interval) {
		if rowsToClient {
			_ = t.Send(proto.TypeInterval, iv)
		}
		if t.live != nil {
			t.live.Interval(liveRes, result.JoinInterval(&iv, nil, roles))
		}
	})
	run.MaxStreamRows = flowrun.ServerStreamRows // the client gets every row as it is cut
	run.Start()
	testErr := t.wait(run)
	if testErr != nil || t.abandoned() {
		// The client is gone or misbehaving: its streams' last figures
		// are not worth waiting for its socket buffers to drain.
		for _, f := range t.flows {
			_ = f.Close()
		}
	}
	end := run.Finish(result.RoleServer)
	end.Limits = limits
	end.ConcurrentTests = t.Admission.Concurrent()
	if testErr == nil {
		testErr = run.FirstError()
	}
	if testErr != nil {
		end.Error = testErr.Error()
		res.Error = testErr.Error()
	}
	res.Local = end
	within := control.WriteTimeout
	if testErr != nil {
		within = control.AbortWrite
	}
	if err := t.SendWithin(proto.TypeEndReport, withoutIntervals(end), within); err == nil && testErr == nil {
		t.awaitEndReport(res)
		if sendOutput {
			_ = t.Send(proto.TypeServerOutput, serverOutput(t.Config.ServerOutput, t.Request.OutputFormat(), res))
		}
	}
	t.Log.Info("test finished", "error", res.Error, slog.Group("flows", summaryAttrs(res)...))
	return res, testErr
}

// awaitStart waits for the client's Start once the streams are ready.
func (t *serverTest) awaitStart() error {
	timer := time.NewTimer(t.Handshake)
	defer timer.Stop()
	select {
	case <-t.ev.Started:
		return nil
	case err := <-t.ev.Lost:
		return fmt.Errorf("waiting for start: %w", err)
	case <-timer.C:
		return fmt.Errorf("waiting for start: nothing within %v", t.Handshake)
	case <-t.ctx.Done():
		return errors.New("server shutting down")
	}
}

// awaitEndReport takes the client's final report for the server's record.
// The client sends it once its own receivers have drained; a client that
// the server's clock had to stop gets a second.
func (t *serverTest) awaitEndReport(res *result.Result) {
	wait := min(control.EndReportTimeout, netsetup.DrainTime(t.Request.Spec, t.ControlRTT())+time.Second+4*t.ControlRTT())
	if t.abandoned() {
		wait = time.Second
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ce := <-t.ev.End:
		res.Remote = ce
	case <-t.ev.Lost:
		// The client hangs up right after its report: both may be ready.
		select {
		case ce := <-t.ev.End:
			res.Remote = ce
		default:
		}
	case <-timer.C:
	case <-t.ctx.Done():
	}
}

// collectStreams waits for every data connection of the test, applies
// the spec's socket options to each and tells the client they are ready.
func (t *serverTest) collectStreams() (map[int]result.Socket, error) {
	var ready proto.StreamsReady
	var err error
	if t.Request.Spec.Protocol == spec.UDP {
		err = t.collectUDP(&ready)
	} else {
		err = t.collectTCP(&ready)
	}
	if err != nil {
		return nil, err
	}
	sockets := map[int]result.Socket{}
	for _, ss := range ready.Streams {
		sockets[ss.ID] = ss.Socket
	}
	return sockets, t.Send(proto.TypeStreamsReady, ready)
}

func (t *serverTest) collectTCP(ready *proto.StreamsReady) error {
	want := t.Request.Spec.DataConns()
	seen := map[int]bool{}
	timer := time.NewTimer(t.Handshake)
	defer timer.Stop()
	for len(t.flows) < want {
		select {
		case dc := <-t.Admission.Data:
			id := int(dc.StreamID)
			if id < 1 || id > want || seen[id] {
				_ = dc.Conn.Close()
				return fmt.Errorf("data connection with bad stream ID %d", id)
			}
			seen[id] = true
			if err := netsetup.SetupAccepted(dc.Conn, t.Request.Spec, id, !t.Request.Spec.ClientSendsOn(id)); err != nil {
				_ = dc.Conn.Close()
				return fmt.Errorf("server: %w", err)
			}
			st, err := newTCPStream(id, !t.Request.Spec.ClientSendsOn(id), dc.Conn, t.Request.Spec)
			if err != nil {
				_ = dc.Conn.Close()
				return fmt.Errorf("server: %w", err)
			}
			t.flows = append(t.flows, flowrun.NewTCPFlow(st, t.Request.Spec.Length, t.Request.Spec.TimelinePeriod()).AskMPTCP(t.Request.Spec.MPTCP))
			ready.Streams = append(ready.Streams, proto.ServerStream{
				ID: id, LocalAddr: dc.Conn.LocalAddr().String(), RemoteAddr: dc.Conn.RemoteAddr().String(),
				Socket: flowrun.GrantedSocket(dc.Conn, t.Request.Spec),
			})
		case <-timer.C:
			return fmt.Errorf("only %d of %d data connections arrived within %v", len(t.flows), want, t.Handshake)
		case err := <-t.ev.Lost:
			t.ev.PutBackLost(err) // for awaitStart's sake; the test ends here anyway
			return fmt.Errorf("set-up: %w", err)
		case <-t.ctx.Done():
			return errors.New("server shutting down")
		}
	}
	return nil
}

// collectUDP waits for each stream's hello on the server's UDP port and
// gives the stream its own socket. Only the control connection's host may
// open streams of the test.
func (t *serverTest) collectUDP(ready *proto.StreamsReady) error {
	if t.Config.UDP == nil {
		return errors.New("this server does not serve UDP")
	}
	peer := t.Conn.RemoteAddr().(*net.TCPAddr).IP
	ctx, cancel := context.WithTimeout(t.ctx, t.Handshake)
	defer cancel()
	// A client that hangs up during set-up frees its slot at once.
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case err := <-t.ev.Lost:
			t.ev.PutBackLost(err)
			cancel()
		case <-watchDone:
		}
	}()
	type got struct {
		id   int
		conn *net.UDPConn
		err  error
	}
	want := t.Request.Spec.DataConns()
	ch := make(chan got, want)
	for id := 1; id <= want; id++ {
		go func() {
			conn, _, _, err := t.Config.UDP.Expect(ctx, func(p []byte, from *net.UDPAddr) bool {
				h, ok := udpflow.ParseHello(p)
				return ok && h.Token == [16]byte(t.Admission.Token) && int(h.StreamID) == id && from.IP.Equal(peer)
			})
			ch <- got{id, conn, err}
		}()
	}
	var firstErr error
	for range want {
		g := <-ch
		if g.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("UDP stream %d never said hello: %w", g.id, g.err)
			}
			continue
		}
		sender := !t.Request.Spec.ClientSendsOn(g.id)
		if sender {
			if err := netsetup.CheckUDPPacing(t.Request.Spec, g.conn.LocalAddr().String()); err != nil {
				_ = g.conn.Close()
				firstErr = cmp.Or(firstErr, err)
				continue
			}
		}
		f, err := flowrun.NewUDPFlow(g.conn, t.Request.Spec, [16]byte(t.Admission.Token), g.id, sender, t.Auth.DatagramKey([16]byte(t.Admission.Token)))
		if err != nil {
			_ = g.conn.Close()
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		t.flows = append(t.flows, f)
		ready.Streams = append(ready.Streams, proto.ServerStream{
			ID: g.id, LocalAddr: g.conn.LocalAddr().String(), RemoteAddr: g.conn.RemoteAddr().String(),
			Socket: flowrun.UDPSocket(g.conn, t.Request.Spec, f.Sender()),
		})
	}
	return firstErr
}

// wait runs the test until every flow has finished: the client's Stop
// ends the server's senders, the client's SenderDone lets the server's
// receivers drain, and a lost client or a shutdown aborts the test. The
// server keeps its own clock too (see clock): a client that never stops
// its test, or stops reading, doesn't keep it running.
func (t *serverTest) wait(run *flowrun.Runner) error {
	soft, hard := t.clock()
	var softC, hardC <-chan time.Time
	if soft > 0 {
		st, ht := time.NewTimer(soft), time.NewTimer(hard)
		defer st.Stop()
		defer ht.Stop()
		softC, hardC = st.C, ht.C
	}
	done := run.Done()
	sendersDone := run.SendersDone()
	peerSent := false
	// The server's caps on rates and bytes read the test's counters on a
	// ticker, off the data path.
	var meterC <-chan time.Time
	if meter := t.Admission.Meter; meter != nil {
		tick := time.NewTicker(cmp.Or(t.Admission.MeterEvery, time.Second))
		defer tick.Stop()
		meterC = tick.C
		_ = meter(0)                                 // its window starts with the streams
		defer func() { _ = meter(t.movedBytes()) }() // the bytes since its last read count too
	}
	for {
		select {
		case <-meterC:
			if err := t.Admission.Meter(t.movedBytes()); err != nil {
				t.Abort(err.Error())
				run.Abort()
				<-done
				return err
			}
		case <-done:
			if sendersDone != nil { // done and sendersDone were ready at once
				_ = t.Send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			}
			return nil
		case <-t.ev.Stopped:
			t.clientSpoke = true
			run.StopSenders()
		case <-sendersDone:
			_ = t.Send(proto.TypeSenderDone, proto.SenderDone{Sent: run.SentCounts()})
			sendersDone = nil
		case sent := <-t.ev.SenderDone:
			peerSent, t.clientSpoke = true, true
			run.SetPeerSent(sent)
			run.DrainReceivers(netsetup.DrainTime(t.Request.Spec, t.ControlRTT()))
		case <-softC:
			t.clockStopped = true
			run.StopSenders()
			if !t.clientSpoke {
				t.Log.Warn("the client did not end its test on time; the server's clock stops it")
				t.ShortenWrites(control.AbortWrite) // a client this late may not be reading either
			}
			if !peerSent {
				run.DrainReceivers(clockDrain)
			}
			softC = nil
		case <-hardC:
			t.clockStopped = true
			run.Abort()
			<-done
			return errors.New("the test outlived the server's clock; aborted")
		case err := <-t.ev.Lost:
			if t.ctx.Err() != nil {
				continue // the shutdown case says why
			}
			var pe *control.ProtocolError
			if errors.As(err, &pe) {
				_ = t.SendWithin(proto.TypeError, proto.Error{Message: pe.Error()}, control.AbortWrite)
			}
			run.Abort()
			<-done
			return fmt.Errorf("client went away: %w", err)
		case <-t.ctx.Done():
			t.Abort("server shutting down: test aborted")
			run.Abort()
			<-done
			return errors.New("aborted: server shutting down")
		}
	}
}

// abandoned says the client left the server's clock to end its test and
// never said a word about it: its ending is not worth waiting for.
func (t *serverTest) abandoned() bool { return t.clockStopped && !t.clientSpoke }

// clockGrace is how long past a test's length the server waits for the
// client's Stop before its own clock stops the senders: the Stop is on its
// way for a round trip at most, since the server started half a round
// trip after the client.
func clockGrace(rtt time.Duration) time.Duration {
	return min(time.Second+2*rtt, 1500*time.Millisecond)
}

// clockDrain is how long the receivers go on once the server's clock has
// stopped a test whose client said nothing.
const clockDrain = 2 * time.Second

// clock is when, from the start, the server stops a test's senders
// itself (soft), and when it aborts whatever still runs (hard): the
// client's length plus a grace, or the server's maximum for tests that
// stop on bytes. 0 means no clock.
func (t *serverTest) clock() (soft, hard time.Duration) {
	soft = t.Config.MaxDuration
	if t.Request.Spec.Duration > 0 {
		soft = t.Request.Spec.Duration + t.Request.Spec.Omit + clockGrace(t.ControlRTT())
	}
	if soft <= 0 {
		return 0, 0
	}
	return soft, soft + max(clockDrain, netsetup.DrainTime(t.Request.Spec, t.ControlRTT())) + time.Second
}

func summaryAttrs(r *result.Result) []any {
	var out []any
	for _, d := range r.Directions() {
		out = append(out, slog.Group(d.Label(),
			"sent_bytes", d.Sent.Bytes, "received_bytes", d.Received.Bytes,
			"received_bps", d.Received.BitsPerSecond()))
	}
	return out
}

// maxServerOutput bounds the server's report in a server-output frame,
// well inside a frame's limit; a longer one is cut, and says so.
const maxServerOutput = proto.MaxFrame / 2

// serverOutput renders the server's record for the client: its text, or
// its JSON document when render gives JSON; text in the client's -f.
func serverOutput(render func(*result.Result, units.Format) ([]byte, bool), format units.Format, res *result.Result) proto.ServerOutput {
	out, isJSON := render(res, format)
	if isJSON && len(out) <= maxServerOutput && json.Valid(out) {
		return proto.ServerOutput{JSON: json.RawMessage(bytes.TrimSpace(out))}
	}
	if isJSON {
		return proto.ServerOutput{Text: "(the server's JSON report was too long to send)\n"}
	}
	if len(out) > maxServerOutput {
		out = append(out[:maxServerOutput:maxServerOutput], "\n(the server's report was cut here: too long to send)\n"...)
	}
	return proto.ServerOutput{Text: string(out)}
}

// liveStart is the server's record of the test as it starts, for a live
// observer: the server's streams as Local, the client's (the same
// connections seen from the other end) as Remote.
func (t *serverTest) liveStart(res *result.Result, sockets map[int]result.Socket) *result.Result {
	r := *res
	r.Local = result.End{Role: result.RoleServer, Host: flowrun.LocalHost()}
	r.Remote.Streams = nil
	for _, f := range t.flows {
		local, remote := f.Addrs()
		r.Local.Streams = append(r.Local.Streams, result.Stream{
			ID: f.ID(), Sender: f.Sender(), Socket: sockets[f.ID()], LocalAddr: local, RemoteAddr: remote,
		})
		r.Remote.Streams = append(r.Remote.Streams, result.Stream{
			ID: f.ID(), Sender: !f.Sender(), LocalAddr: remote, RemoteAddr: local,
		})
	}
	return &r
}

// movedBytes is what the test's streams have sent (and the client
// acknowledged) and received so far, all together.
func (t *serverTest) movedBytes() int64 {
	var n int64
	for _, f := range t.flows {
		n += flowrun.Delivered(f)
	}
	return n
}
