package control

import (
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/stats"
)

// EndReportTimeout bounds the wait for the peer's final report.
const EndReportTimeout = 15 * time.Second

// Events are the peer's frames once a test runs, read in the background
// through the control state machine, each kind on its own channel. Every
// kind but intervals and clock replies comes at most once.
type Events struct {
	Started    <-chan struct{}        // the client's Start (server)
	Stopped    <-chan struct{}        // the client's Stop (server)
	Intervals  <-chan result.Interval // the server's interval reports (bulk client)
	SenderDone <-chan map[int]int64   // the peer's senders have stopped: what each stream sent (bulk)
	End        <-chan result.End      // the peer's final report
	// ServerOutput is the server's own report, after its final report,
	// when the client asked for it (bulk client).
	ServerOutput <-chan proto.ServerOutput
	Clock        <-chan stats.OffsetSample // answers to clock requests (client)
	// PeerError is the peer's error message; Lost says it too.
	PeerError <-chan string
	// Lost says why reading ended: a lost connection, the peer's error
	// (a *PeerError inside), or a frame the state did not admit (a
	// *ProtocolError).
	Lost <-chan error
	lost chan error
}

// PutBackLost puts a reason taken from Lost back for the next step that waits
// on it: reading has ended, so its one slot is free.
func (e Events) PutBackLost(err error) { e.lost <- err }

func (c *controlConn) events() Events {
	c.readLoop()
	return Events{
		Started: c.started, Stopped: c.stop, Intervals: c.intervals, SenderDone: c.senderDoneC,
		End: c.end, ServerOutput: c.output, Clock: c.clock, PeerError: c.peerErr, Lost: c.lost, lost: c.lost,
	}
}
