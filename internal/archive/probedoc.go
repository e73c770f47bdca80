package archive

import (
	"fmt"
	"time"
)

// The probes' documents (wireperf ping -J, wireperf tcp-connect -J) are
// their own layout, not iperf3's: {"ping": {...}} and
// {"tcp_connect": {...}}. The archive reads them itself, as it reads
// every document, so that it needs neither probe.

// docPercentiles is a probe's times in µs (result.Percentiles).
type docPercentiles struct {
	Count int64    `json:"count"`
	Min   *float64 `json:"min"`
	Mean  *float64 `json:"mean"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
}

// docPing is what the archive reads of a ping run.
type docPing struct {
	Target      string         `json:"target"`
	Addr        string         `json:"addr"`
	Size        int            `json:"size"`
	Started     time.Time      `json:"started"`
	Ended       time.Time      `json:"ended"`
	Sent        int64          `json:"sent"`
	Received    int64          `json:"received"`
	Duplicates  int64          `json:"duplicates"`
	LossPercent *float64       `json:"loss_percent"`
	RTT         docPercentiles `json:"rtt_us"`
	TTLChanges  int64          `json:"ttl_changes"`
}

// docConnect is what the archive reads of a tcp-connect run.
type docConnect struct {
	Target    string         `json:"target"`
	Addr      string         `json:"addr"`
	Started   time.Time      `json:"started"`
	Ended     time.Time      `json:"ended"`
	Attempts  int64          `json:"attempts"`
	Connected int64          `json:"connected"`
	Refused   int64          `json:"refused"`
	TimedOut  int64          `json:"timed_out"`
	Failed    int64          `json:"failed"`
	Connect   docPercentiles `json:"connect_us"`
}

// The figures of the probes, kept in Summary.Figures.
const (
	// A probe's times beyond the summary's columns, in µs: ping's echo
	// RTT, tcp-connect's handshake.
	FigureProbeP90us = "probe_p90_us"
	FigureProbeMaxUs = "probe_max_us"
	// ping: replies beyond the first to a request, and replies whose TTL
	// differed from the reply before.
	FigurePingDuplicates = "ping_duplicates"
	FigurePingTTLChanges = "ping_ttl_changes"
	// tcp-connect: attempts answered by a reset, unanswered within the
	// timeout, and failed otherwise (unreachable, say).
	FigureConnectRefused  = "connect_refused"
	FigureConnectTimedOut = "connect_timed_out"
	FigureConnectFailed   = "connect_failed"
)

// probeFigureColumns are the probes' figures with their units.
var probeFigureColumns = []column{
	{FigureProbeP90us, "us"},
	{FigureProbeMaxUs, "us"},
	{FigurePingDuplicates, "replies"},
	{FigurePingTTLChanges, "replies"},
	{FigureConnectRefused, "attempts"},
	{FigureConnectTimedOut, "attempts"},
	{FigureConnectFailed, "attempts"},
}

// parsePing summarises a ping run: its RTT percentiles in the summary's
// probe_p50_us and probe_p99_us (which the grid and /metrics judge as
// they judge rr's), its min and mean RTT, and the share of requests
// unanswered as lost_percent.
func parsePing(pg *docPing, stated string) *Parsed {
	p := probeParsed(pg.Target, pg.Addr, pg.Started, pg.Ended, stated)
	p.Axes["proto"] = Axis{Label: "icmp"}
	if pg.Size > 0 {
		p.Axes["length"] = numAxis(float64(pg.Size), fmt.Sprint(pg.Size))
	}
	m := &p.Summary
	if pg.Sent > 0 {
		if v := finitePtr(pg.LossPercent); v != nil {
			m.LostPercent = percentIn(*v)
		} else {
			m.LostPercent = percentIn(100 * float64(pg.Sent-pg.Received) / float64(pg.Sent))
		}
	}
	p.readProbeTimes(&pg.RTT)
	p.setFigure(FigurePingDuplicates, float64(pg.Duplicates))
	p.setFigure(FigurePingTTLChanges, float64(pg.TTLChanges))
	return p
}

// parseConnect summarises a tcp-connect run: its handshake times as
// ping's RTTs, and the share of attempts that did not connect (refused,
// timed out or failed) as lost_percent, each outcome's count a figure.
func parseConnect(c *docConnect, stated string) *Parsed {
	p := probeParsed(c.Target, c.Addr, c.Started, c.Ended, stated)
	p.Axes["proto"] = Axis{Label: "tcp"}
	if c.Attempts > 0 {
		p.Summary.LostPercent = percentIn(100 * float64(c.Attempts-c.Connected) / float64(c.Attempts))
	}
	p.readProbeTimes(&c.Connect)
	p.setFigure(FigureConnectRefused, float64(c.Refused))
	p.setFigure(FigureConnectTimedOut, float64(c.TimedOut))
	p.setFigure(FigureConnectFailed, float64(c.Failed))
	return p
}

// percentIn is a share in percent, held to 0 to 100: a document whose
// counts contradict each other (more answered than sent) is not believed
// past what a share can be.
func percentIn(v float64) *float64 { return ptr(min(max(v, 0), 100)) }

func probeParsed(target, addr string, started, ended time.Time, stated string) *Parsed {
	p := &Parsed{Wireperf: true, Axes: map[string]Axis{}, RemoteHost: target, Error: stated,
		Started: started.UTC(), Ended: ended.UTC()}
	if p.RemoteHost == "" {
		p.RemoteHost = addr
	}
	if !started.IsZero() && ended.After(started) {
		p.Summary.Seconds = ptr(ended.Sub(started).Seconds())
	}
	return p
}

// readProbeTimes keeps a probe's times: none when nothing answered
// (its percentiles are then zeros, not times).
func (p *Parsed) readProbeTimes(t *docPercentiles) {
	if t.Count <= 0 {
		return
	}
	m := &p.Summary
	m.ProbeP50us, m.ProbeP99us = finitePtr(t.P50), finitePtr(t.P99)
	if v := finitePtr(t.Min); v != nil {
		m.MinRTTms = ptr(*v / 1000)
	}
	if v := finitePtr(t.Mean); v != nil {
		m.MeanRTTms = ptr(*v / 1000)
	}
	if v := finitePtr(t.P90); v != nil {
		p.setFigure(FigureProbeP90us, *v)
	}
	if v := finitePtr(t.Max); v != nil {
		p.setFigure(FigureProbeMaxUs, *v)
	}
}

// IsProbeRun says a run is a probe's (ping, tcp-connect): every one
// stores its outcome counts (ping_duplicates, connect_refused), whether
// or not anything answered. Migration 10 knows probe runs the same way.
func (m Summary) IsProbeRun() bool {
	_, ping := m.Figures[FigurePingDuplicates]
	_, connect := m.Figures[FigureConnectRefused]
	return ping || connect
}
