package archive

import (
	"strconv"
	"time"
)

// docRRUL is the part of an RRUL run's document (wireperf rrul -J) that
// the archive keeps.
type docRRUL struct {
	Host              string    `json:"host"`
	StartedAt         time.Time `json:"started_at"`
	IdleSeconds       float64   `json:"idle_seconds"`
	LoadSeconds       float64   `json:"load_seconds"`
	AfterSeconds      float64   `json:"after_seconds"`
	UpBitsPerSecond   *float64  `json:"up_bits_per_second"`
	DownBitsPerSecond *float64  `json:"down_bits_per_second"`
	Flows             []struct {
		Bytes       int64 `json:"bytes"`
		Retransmits int64 `json:"retransmits"`
	} `json:"flows"`
	Probes []struct {
		Phases []struct {
			Label string `json:"label"`
			Sent  int64  `json:"sent"`
			Lost  int64  `json:"lost"`
		} `json:"phases"`
	} `json:"probes"`
	Latency struct {
		Idle     rrulPercentiles `json:"idle_us"`
		Loaded   rrulPercentiles `json:"loaded_us"`
		Increase rrulPercentiles `json:"increase_us"`
	} `json:"latency"`
	CPU *struct {
		User   float64 `json:"user_percent"`
		System float64 `json:"system_percent"`
		Total  float64 `json:"total_percent"`
	} `json:"cpu"`
	ServerCPU *struct {
		User   float64 `json:"user_percent"`
		System float64 `json:"system_percent"`
		Total  float64 `json:"total_percent"`
	} `json:"server_cpu"`
	Error string `json:"error"`
}

// rrulPercentiles is an RRUL run's RTT figures in µs (result.Percentiles).
type rrulPercentiles struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
}

// The figures of an RRUL run beside its summary: the idle RTT's median
// and the increase under load (µs), and each direction's goodput.
const (
	FigureRRULIdleP50us     = "rrul_idle_p50_us"
	FigureRRULIncreaseP50us = "rrul_increase_p50_us"
	FigureRRULIncreaseP99us = "rrul_increase_p99_us"
	FigureRRULUpBps         = "rrul_up_bps"
	FigureRRULDownBps       = "rrul_down_bps"
)

// rrulFigureColumns are an RRUL run's figures with their units.
var rrulFigureColumns = []column{
	{FigureRRULIdleP50us, "us"},
	{FigureRRULIncreaseP50us, "us"},
	{FigureRRULIncreaseP99us, "us"},
	{FigureRRULUpBps, "bits/s"},
	{FigureRRULDownBps, "bits/s"},
}

// parseRRUL summarises an RRUL run as a run of the archive: the flows'
// bytes and goodput both ways together over the load, the probes' RTT
// under load (p50, p99, mean) and their loss under load, the idle
// minimum, and the idle median and the increase as figures.
func parseRRUL(d *docRRUL) *Parsed {
	p := &Parsed{Wireperf: true, Axes: map[string]Axis{}, Started: d.StartedAt, RemoteHost: d.Host, Error: d.Error}
	if !d.StartedAt.IsZero() {
		total := d.IdleSeconds + d.LoadSeconds + d.AfterSeconds
		p.Ended = d.StartedAt.Add(time.Duration(total * float64(time.Second)))
	}
	m := &p.Summary
	if d.LoadSeconds > 0 {
		m.Seconds = ptr(d.LoadSeconds)
		p.Axes["time"] = numAxis(d.LoadSeconds, strconv.FormatFloat(d.LoadSeconds, 'f', -1, 64))
	}
	p.Axes["proto"] = Axis{Label: "rrul"}
	p.Axes["direction"] = Axis{Label: "bidir"}
	var bytes, retr int64
	for _, f := range d.Flows {
		bytes += f.Bytes
		retr += f.Retransmits
	}
	if len(d.Flows) > 0 {
		m.ReceivedBytes, m.Retransmits = ptr(bytes), ptr(retr)
		p.Axes["parallel"] = numAxis(float64(len(d.Flows)), strconv.Itoa(len(d.Flows)))
	}
	if d.UpBitsPerSecond != nil && d.DownBitsPerSecond != nil {
		m.ReceivedBps = finitePtr(ptr(*d.UpBitsPerSecond + *d.DownBitsPerSecond))
		p.setFigure(FigureRRULUpBps, *d.UpBitsPerSecond)
		p.setFigure(FigureRRULDownBps, *d.DownBitsPerSecond)
	}
	l := d.Latency
	if l.Loaded.Count > 0 {
		m.RRp50us, m.RRp99us = finitePtr(&l.Loaded.P50), finitePtr(&l.Loaded.P99)
		m.MeanRTTms = ptr(l.Loaded.Mean / 1000)
	}
	if l.Idle.Count > 0 {
		m.MinRTTms = ptr(l.Idle.Min / 1000)
		p.setFigure(FigureRRULIdleP50us, l.Idle.P50)
	}
	if l.Idle.Count > 0 && l.Loaded.Count > 0 {
		p.setFigure(FigureRRULIncreaseP50us, l.Increase.P50)
		p.setFigure(FigureRRULIncreaseP99us, l.Increase.P99)
	}
	var sent, lost int64
	for _, pr := range d.Probes {
		for _, ph := range pr.Phases {
			if ph.Label == "loaded" {
				sent += ph.Sent
				lost += ph.Lost
			}
		}
	}
	if sent > 0 {
		m.LostPercent = ptr(100 * float64(lost) / float64(sent))
	}
	if c := d.CPU; c != nil {
		p.setCPU("local", c.User, c.System, c.Total)
	}
	if c := d.ServerCPU; c != nil {
		p.setCPU("remote", c.User, c.System, c.Total)
	}
	return p
}
