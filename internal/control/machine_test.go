package control

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
)

func TestControlMachine(t *testing.T) {
	tests := []struct {
		name  string
		from  ctlState
		seq   []proto.Type
		want  ctlState
		error bool
	}{
		{"server happy path", srvAwaitRequest, []proto.Type{proto.TypeTestRequest, proto.TypeStart, proto.TypeStop, proto.TypeSenderDone, proto.TypeEndReport}, srvEnded, false},
		{"bytes test without stop", srvSetup, []proto.Type{proto.TypeStart, proto.TypeSenderDone, proto.TypeEndReport}, srvEnded, false},
		{"interval from the client", srvSetup, []proto.Type{proto.TypeStart, proto.TypeInterval}, ctlClosed, true},
		{"second end report", srvRunning, []proto.Type{proto.TypeEndReport, proto.TypeEndReport}, ctlClosed, true},
		{"second sender-done", srvRunning, []proto.Type{proto.TypeSenderDone, proto.TypeSenderDone}, ctlClosed, true},
		{"second stop", srvRunning, []proto.Type{proto.TypeStop, proto.TypeStop}, ctlClosed, true},
		{"start before set-up", srvAwaitRequest, []proto.Type{proto.TypeStart}, ctlClosed, true},
		{"request without auth", srvAwaitAuth, []proto.Type{proto.TypeTestRequest}, ctlClosed, true},
		{"error anywhere", srvRunning, []proto.Type{proto.TypeError}, ctlClosed, false},
		{"client happy path", cliAwaitAuth, []proto.Type{proto.TypeChallenge, proto.TypeAuthOK, proto.TypeTestAccept, proto.TypeStreamsReady, proto.TypeInterval, proto.TypeInterval, proto.TypeSenderDone, proto.TypeEndReport}, cliEnded, false},
		{"server output after the end", cliRunning, []proto.Type{proto.TypeEndReport, proto.TypeServerOutput}, cliDone, false},
		{"server output twice", cliEnded, []proto.Type{proto.TypeServerOutput, proto.TypeServerOutput}, ctlClosed, true},
		{"server output before the end", cliRunning, []proto.Type{proto.TypeServerOutput}, ctlClosed, true},
		{"server output to the server", srvEnded, []proto.Type{proto.TypeServerOutput}, ctlClosed, true},
		{"interval after the end", cliRunning, []proto.Type{proto.TypeEndReport, proto.TypeInterval}, ctlClosed, true},
		{"client gets a request", cliAwaitAccept, []proto.Type{proto.TypeTestRequest}, ctlClosed, true},
		{"rr server happy path", srvRRSetup, []proto.Type{proto.TypeClockRequest, proto.TypeClockRequest, proto.TypeStart, proto.TypeClockRequest, proto.TypeStop, proto.TypeEndReport}, srvEnded, false},
		{"rr report after the server's", srvRRRunning, []proto.Type{proto.TypeEndReport}, srvEnded, false},
		{"rr interval from the client", srvRRRunning, []proto.Type{proto.TypeInterval}, ctlClosed, true},
		{"rr sender-done", srvRRRunning, []proto.Type{proto.TypeSenderDone}, ctlClosed, true},
		{"rr second stop", srvRRRunning, []proto.Type{proto.TypeStop, proto.TypeStop}, ctlClosed, true},
		{"rr clock after stop", srvRRStopped, []proto.Type{proto.TypeClockRequest}, ctlClosed, true},
		{"rr client happy path", cliRRAwaitReady, []proto.Type{proto.TypeStreamsReady, proto.TypeClockReply, proto.TypeClockReply, proto.TypeEndReport}, cliEnded, false},
		{"rr interval from the server", cliRRRunning, []proto.Type{proto.TypeInterval}, ctlClosed, true},
		{"bulk client gets a clock reply", cliRunning, []proto.Type{proto.TypeClockReply}, ctlClosed, true},
		{"bulk server gets a clock request", srvRunning, []proto.Type{proto.TypeClockRequest}, ctlClosed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newControlConn(nil, tt.from)
			var err error
			for _, ty := range tt.seq {
				if err = c.admit(ty); err != nil {
					break
				}
			}
			var pe *ProtocolError
			if got := errors.As(err, &pe); got != tt.error {
				t.Fatalf("protocol error = %v, want %v", err, tt.error)
			}
			if c.State() != tt.want {
				t.Fatalf("state = %v, want %v", c.State(), tt.want)
			}
		})
	}
}

// A request-response test takes its branch only where the machine has
// one.
func TestControlBranch(t *testing.T) {
	for from, to := range branches {
		c := newControlConn(nil, from)
		c.branch()
		if c.State() != to {
			t.Errorf("branch from %v = %v, want %v", from, c.State(), to)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a branch while running did not panic")
		}
	}()
	newControlConn(nil, srvRunning).branch()
}

// A second end report once used to block the reader forever on a
// one-slot channel; now it closes the reader with the reason.
func TestControlLoopRefusesSecondEndReport(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newControlConn(a, srvRunning)
	c.readLoop()
	go func() {
		for range 3 {
			if proto.WriteFrame(b, proto.TypeEndReport, result.End{}) != nil {
				return
			}
		}
	}()
	select {
	case err := <-c.lost:
		if !strings.Contains(err.Error(), "unexpected end-report while ended") {
			t.Fatalf("lost = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the reader neither took nor refused the second end report")
	}
	if len(c.end) != 1 {
		t.Fatalf("%d end reports queued, want 1", len(c.end))
	}
}

// readOnlyConn feeds bytes to a controlConn.
type readOnlyConn struct {
	net.Conn
	r io.Reader
}

func (c readOnlyConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// FuzzControl feeds arbitrary bytes to the control reader in every state:
// it must never panic, and a refused frame must close the connection.
func FuzzControl(f *testing.F) {
	var corpus bytes.Buffer
	_ = proto.WriteFrame(&corpus, proto.TypeAuth, proto.Auth{User: "a", Nonce: make([]byte, 32)})
	_ = proto.WriteFrame(&corpus, proto.TypeTestRequest, proto.TestRequest{})
	_ = proto.WriteFrame(&corpus, proto.TypeStart, proto.Start{})
	_ = proto.WriteFrame(&corpus, proto.TypeEndReport, result.End{})
	f.Add(corpus.Bytes(), uint8(srvAwaitAuth))
	f.Add(corpus.Bytes(), uint8(cliRunning))
	f.Fuzz(func(t *testing.T, data []byte, st uint8) {
		state := ctlState(st%uint8(ctlClosed) + 1)
		c := newControlConn(readOnlyConn{r: bytes.NewReader(data)}, state)
		for range 32 {
			if _, err := c.next(); err != nil {
				if c.State() != ctlClosed {
					t.Fatalf("error %v left the state %v", err, c.State())
				}
				return
			}
		}
	})
}

// A reason taken from Lost and put back is there for the next step that
// waits on it: the reader has ended and left its slot free.
func TestEventsPutBackLost(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	c := newControlConn(a, srvSetup)
	ev := c.events()
	_ = b.Close()
	first := <-ev.Lost // the reader ends on the closed pipe
	ev.PutBackLost(first)
	select {
	case again := <-ev.Lost:
		if again != first {
			t.Fatalf("Lost gave %v after %v was put back", again, first)
		}
	default:
		t.Fatal("the reason put back is not on Lost")
	}
}
