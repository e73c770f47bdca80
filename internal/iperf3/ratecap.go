package iperf3

import (
	"errors"
	"time"

	"github.com/wireperf/wireperf/internal/flowrun"
)

// ErrTotalRate is iperf3's IETOTALRATE, in iperf3's words: a server's cap
// on the rate or the bytes of its tests refused or ended the test. An
// error from ServeConfig.Admit or ServeConfig.Meter that is ErrTotalRate
// reaches the client as this code, which an iperf3 client prints as
// "total required bandwidth is larger than server limit".
var ErrTotalRate = errors.New("total required bandwidth is larger than server limit")

// ErrMaxDuration is iperf3's IEMAXSERVERTESTDURATIONEXCEEDED (3.20 and
// later): an Admit error that is ErrMaxDuration reaches the client as
// that code, as an iperf3 3.21 server with --server-max-duration sends it.
var ErrMaxDuration = errors.New("client's requested duration exceeds the server's maximum permitted limit")

// i_errno values of iperf_api.h.
const (
	errCodeTotalRate   = 27 // IETOTALRATE
	errCodeMaxDuration = 37 // IEMAXSERVERTESTDURATIONEXCEEDED
)

// refusalCode is the SERVER_ERROR code an Admit error is sent as, where
// iperf3 3.21 has one; ok is false for the refusals an iperf3 server
// answers with ACCESS_DENIED (busy).
func refusalCode(err error) (code int32, ok bool) {
	switch {
	case errors.Is(err, ErrTotalRate):
		return errCodeTotalRate, true
	case errors.Is(err, ErrMaxDuration):
		return errCodeMaxDuration, true
	}
	return 0, false
}

// capErrCode is the SERVER_ERROR code that ends a test for a meter's
// error: IETOTALRATE for the caps, else "the server has terminated".
func capErrCode(err error) int32 {
	if errors.Is(err, ErrTotalRate) {
		return errCodeTotalRate
	}
	return errCodeServerTerm
}

// meterTicker ticks every MeterEvery while the test runs, when the
// server meters its tests (a nil channel otherwise).
func (t *serverTest) meterTicker() (<-chan time.Time, func()) {
	if t.cfg.Meter == nil {
		return nil, func() {}
	}
	every := t.cfg.MeterEvery
	if every <= 0 {
		every = time.Second
	}
	_ = t.cfg.Meter(0) // the window starts with the streams, as iperf3's stats timer
	tick := time.NewTicker(every)
	return tick.C, tick.Stop
}

// moved is what the test's streams have sent (and the client
// acknowledged) and received so far.
func (t *serverTest) moved() int64 {
	var n int64
	for _, st := range t.streams {
		n += flowrun.Delivered(st.flow)
	}
	return n
}
