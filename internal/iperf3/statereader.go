package iperf3

import "net"

// stateReader reads state bytes in its own goroutine, one per request, so
// a test can wait for the peer's word and for other events at once, and
// JSON can still be read in between.
type stateReader struct {
	req     chan struct{}
	resp    chan stateResp
	pending bool
	quit    chan struct{}
}

type stateResp struct {
	state State
	err   error
}

func newStateReader(conn net.Conn) *stateReader {
	s := &stateReader{req: make(chan struct{}, 1), resp: make(chan stateResp, 1), quit: make(chan struct{})}
	go func() {
		for {
			select {
			case <-s.quit:
				return
			case <-s.req:
			}
			st, err := ReadState(conn)
			s.resp <- stateResp{st, err}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// ask requests the next state byte unless a request is outstanding.
func (s *stateReader) ask() {
	if !s.pending {
		s.pending = true
		s.req <- struct{}{}
	}
}

func (s *stateReader) close() { close(s.quit) }
