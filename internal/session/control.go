package session

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/result"
)

// controlReader reads the peer's control messages during a test and
// hands each kind to its own channel.
type controlReader struct {
	stop       chan struct{}        // client asked to stop (server side)
	intervals  chan result.Interval // server's interval reports (client side)
	end        chan result.End      // the peer's final report
	peerErr    chan string          // the peer's error message
	senderDone chan map[int]int64   // the peer's senders have stopped
	lost       chan error           // the connection failed or broke protocol
}

func readControl(conn net.Conn) *controlReader {
	c := &controlReader{
		stop:       make(chan struct{}, 1),
		intervals:  make(chan result.Interval, 1024),
		end:        make(chan result.End, 1),
		peerErr:    make(chan string, 1),
		senderDone: make(chan map[int]int64, 1),
		lost:       make(chan error, 1),
	}
	go c.loop(conn)
	return c
}

func (c *controlReader) loop(conn net.Conn) {
	for {
		fr, err := proto.ReadFrame(conn)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("control connection closed")
			}
			c.lost <- err
			return
		}
		switch fr.Type {
		case proto.TypeStop:
			select {
			case c.stop <- struct{}{}:
			default:
			}
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
			select {
			case c.senderDone <- m.Sent:
			default: // only the first counts
			}
		case proto.TypeEndReport:
			var e result.End
			if err := fr.Decode(&e); err != nil {
				c.lost <- err
				return
			}
			c.end <- e
		case proto.TypeError:
			var e proto.Error
			_ = fr.Decode(&e)
			c.peerErr <- e.Message
			c.lost <- fmt.Errorf("peer error: %s", e.Message)
			return
		default:
			c.lost <- fmt.Errorf("unexpected %v during the test", fr.Type)
			return
		}
	}
}
