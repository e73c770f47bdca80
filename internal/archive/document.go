package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Parsed is what the archive keeps beside a -J document: read from the
// document itself, so that a native run, an imported iperf3 log and an
// imported wireperf log are summarised by one piece of code.
type Parsed struct {
	Wireperf     bool // the document has wireperf's extension
	Version      string
	Started      time.Time
	Ended        time.Time
	LocalHost    string
	RemoteHost   string
	LocalKernel  string
	RemoteKernel string
	Error        string
	Summary      Summary
	Intervals    []Interval
	Hosts        []HostSample
	Limits       []HostLimits
	// Axes are the test's settings that a campaign may sweep, as the
	// document states them (window, parallel, time, length, ...).
	Axes map[string]Axis
}

// iperf3's -J layout, the parts the archive reads. Numbers that a log may
// omit are pointers.
type docSum struct {
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Seconds       float64  `json:"seconds"`
	Bytes         *int64   `json:"bytes"`
	BitsPerSecond *float64 `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *int64   `json:"lost_packets"`
	Packets       *int64   `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
	OutOfOrder    *int64   `json:"out_of_order"`
	Omitted       bool     `json:"omitted"`
	Sender        *bool    `json:"sender"`
}

type docIntervalStream struct {
	docSum
	Socket        int      `json:"socket"`
	SndCwnd       *int64   `json:"snd_cwnd"`
	RTT           *float64 `json:"rtt"`
	ReceiverBytes *int64   `json:"receiver_bytes"`
}

type docInterval struct {
	Streams           []docIntervalStream `json:"streams"`
	Sum               *docSum             `json:"sum"`
	SumBidirReverse   *docSum             `json:"sum_bidir_reverse"`
	SumSent           *docSum             `json:"sum_sent"`
	SumReceived       *docSum             `json:"sum_received"`
	SumSentReverse    *docSum             `json:"sum_sent_bidir_reverse"`
	SumReceiveReverse *docSum             `json:"sum_received_bidir_reverse"`
}

type docEndStream struct {
	Sender *struct {
		MinRTT  *float64 `json:"min_rtt"`
		MeanRTT *float64 `json:"mean_rtt"`
	} `json:"sender"`
}

type docHostEnd struct {
	Role string `json:"role"`
	Host struct {
		Hostname string `json:"hostname"`
		System   string `json:"system"`
		Version  string `json:"version"`
	} `json:"host"`
	Limits json.RawMessage `json:"limits"`
	CPU    *struct {
		User   float64 `json:"user_percent"`
		System float64 `json:"system_percent"`
		Total  float64 `json:"total_percent"`
	} `json:"cpu"`
	Streams []struct {
		Sender bool `json:"sender"`
		Socket struct {
			MTU           int   `json:"mtu"`
			SndBufGranted int64 `json:"sndbuf_granted"`
			RcvBufGranted int64 `json:"rcvbuf_granted"`
		} `json:"socket"`
	} `json:"streams"`
	HostCounters *struct {
		Seconds      float64 `json:"seconds"`
		MemUsedBytes int64   `json:"mem_used_bytes"`
		CPUs         []struct {
			Name    string  `json:"name"`
			User    float64 `json:"user"`
			System  float64 `json:"system"`
			SoftIRQ float64 `json:"softirq"`
		} `json:"cpus"`
		Samples []docHostSample `json:"samples"`
	} `json:"host_counters"`
	RR *struct {
		Points []struct {
			RequestSize int `json:"request_size"`
			RTT         struct {
				Min  *float64 `json:"min"`
				Mean *float64 `json:"mean"`
				P50  *float64 `json:"p50"`
				P99  *float64 `json:"p99"`
			} `json:"rtt_us"`
			Lost int64 `json:"lost"`
			Sent int64 `json:"sent"`
		} `json:"points"`
	} `json:"rr"`
}

type document struct {
	Start *struct {
		Version    string `json:"version"`
		SystemInfo string `json:"system_info"`
		Timestamp  struct {
			Timesecs int64 `json:"timesecs"`
		} `json:"timestamp"`
		ConnectingTo struct {
			Host string `json:"host"`
		} `json:"connecting_to"`
		TestStart struct {
			Protocol   string  `json:"protocol"`
			NumStreams int     `json:"num_streams"`
			Blksize    int64   `json:"blksize"`
			Duration   float64 `json:"duration"`
			Reverse    int     `json:"reverse"`
			Bidir      int     `json:"bidir"`
		} `json:"test_start"`
		SockBufsize int64 `json:"sock_bufsize"`
	} `json:"start"`
	Intervals []docInterval `json:"intervals"`
	End       *struct {
		Streams               []docEndStream `json:"streams"`
		Sum                   *docSum        `json:"sum"`
		SumSent               *docSum        `json:"sum_sent"`
		SumReceived           *docSum        `json:"sum_received"`
		ServerOutput          json.RawMessage
		CPUUtilizationPercent *struct {
			HostTotal   float64 `json:"host_total"`
			HostUser    float64 `json:"host_user"`
			HostSystem  float64 `json:"host_system"`
			RemoteTotal float64 `json:"remote_total"`
			RemoteUser  float64 `json:"remote_user"`
			RemoteSys   float64 `json:"remote_system"`
			HostRSS     int64   `json:"host_peak_rss_bytes"`
			RemoteRSS   int64   `json:"remote_peak_rss_bytes"`
		} `json:"cpu_utilization_percent"`
	} `json:"end"`
	Error string `json:"error"`
	// A request-response document (wireperf rr -J): a kind and the result.
	Kind   string `json:"kind"`
	Result *struct {
		StartedAt   time.Time  `json:"started_at"`
		ConnectHost string     `json:"connect_host"`
		Local       docHostEnd `json:"local"`
		Remote      docHostEnd `json:"remote"`
	} `json:"result"`
	// A UDPmon sweep (wireperf udpmon -J): its kind and the sweep.
	Sweep *docSweep `json:"sweep"`
	// An RRUL run (wireperf rrul -J, rruldoc.go): its kind and the run.
	RRUL *docRRUL `json:"rrul"`
	// The probes' documents (probedoc.go).
	Ping       *docPing    `json:"ping"`
	TCPConnect *docConnect `json:"tcp_connect"`
	Wireperf   *struct {
		Result struct {
			Local  docHostEnd `json:"local"`
			Remote docHostEnd `json:"remote"`
		} `json:"result"`
	} `json:"wireperf"`
}

// ErrNotDocument is a file that is not a -J document.
var ErrNotDocument = errors.New("not an iperf3 or wireperf JSON document")

// ParseDocument reads a -J document (iperf3's layout, with or without
// wireperf's extension).
func ParseDocument(doc []byte) (*Parsed, error) {
	var d document
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotDocument, err)
	}
	if d.Kind == "rr" && d.Result != nil {
		return parseRR(&d), nil
	}
	if d.Kind == "udpmon" && d.Sweep != nil {
		return parseSweep(d.Sweep), nil
	}
	if d.Kind == "rrul" && d.RRUL != nil {
		return parseRRUL(d.RRUL), nil
	}
	if d.Ping != nil {
		return parsePing(d.Ping, d.Error), nil
	}
	if d.TCPConnect != nil {
		return parseConnect(d.TCPConnect, d.Error), nil
	}
	if d.Start == nil && d.End == nil {
		return nil, fmt.Errorf("%w: no start or end object", ErrNotDocument)
	}
	p := &Parsed{Wireperf: d.Wireperf != nil, Error: d.Error, Axes: map[string]Axis{}}
	if st := d.Start; st != nil {
		p.Version = st.Version
		if st.Timestamp.Timesecs > 0 {
			p.Started = time.Unix(st.Timestamp.Timesecs, 0).UTC()
		}
		p.RemoteHost = st.ConnectingTo.Host
		p.LocalKernel = st.SystemInfo
		ts := st.TestStart
		if ts.NumStreams > 0 {
			p.Axes["parallel"] = numAxis(float64(ts.NumStreams), fmt.Sprint(ts.NumStreams))
		}
		if ts.Duration > 0 {
			p.Axes["time"] = numAxis(ts.Duration, fmt.Sprint(ts.Duration))
		}
		if ts.Blksize > 0 {
			p.Axes["length"] = numAxis(float64(ts.Blksize), fmt.Sprint(ts.Blksize))
		}
		if st.SockBufsize > 0 {
			p.Axes["window"] = numAxis(float64(st.SockBufsize), fmt.Sprint(st.SockBufsize))
		}
		if ts.Protocol != "" {
			p.Axes["proto"] = Axis{Label: lower(ts.Protocol)}
		}
		dir := "up"
		if ts.Bidir != 0 {
			dir = "bidir"
		} else if ts.Reverse != 0 {
			dir = "down"
		}
		p.Axes["direction"] = Axis{Label: dir}
	}
	p.readEnd(&d)
	p.readIntervals(&d)
	if w := d.Wireperf; w != nil {
		p.readHost("local", &w.Result.Local)
		p.readHost("remote", &w.Result.Remote)
		p.readBuffers(&w.Result.Local, &w.Result.Remote)
		p.LocalHost = w.Result.Local.Host.Hostname
		if p.RemoteHost == "" {
			p.RemoteHost = w.Result.Remote.Host.Hostname
		}
		if s := w.Result.Local.Host.System; s != "" {
			p.LocalKernel = s
		}
		p.RemoteKernel = w.Result.Remote.Host.System
		if p.Version == "" {
			p.Version = w.Result.Local.Host.Version
		}
		p.readRR(&w.Result.Local)
	}
	if !p.Started.IsZero() && p.Summary.Seconds != nil {
		p.Ended = p.Started.Add(time.Duration(*p.Summary.Seconds * float64(time.Second)))
	}
	return p, nil
}

func numAxis(v float64, label string) Axis { return Axis{Num: &v, Label: label} }

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }

func (p *Parsed) readEnd(d *document) {
	end := d.End
	if end == nil {
		return
	}
	m := &p.Summary
	sent, recv := end.SumSent, end.SumReceived
	if sent == nil && recv == nil && end.Sum != nil { // iperf3 UDP before 3.x's sum_sent
		sent = end.Sum
	}
	if sent != nil {
		m.SentBytes, m.SentBps, m.Retransmits = sent.Bytes, finitePtr(sent.BitsPerSecond), sent.Retransmits
		m.Seconds = ptr(sent.Seconds)
	}
	if recv != nil {
		m.ReceivedBytes, m.ReceivedBps = recv.Bytes, finitePtr(recv.BitsPerSecond)
		if recv.Seconds <= 0 && recv.Bytes != nil && *recv.Bytes > 0 {
			// Bytes that arrived at one instant (a burst read at once) have
			// no rate to measure: not a rate of 0.
			m.ReceivedBps = nil
		}
		if recv.Seconds > 0 {
			m.Seconds = ptr(recv.Seconds)
		}
	}
	// UDP: the receiver's loss and jitter; iperf3 puts them in "sum".
	for _, s := range []*docSum{end.Sum, recv} {
		if s == nil {
			continue
		}
		if s.LostPercent != nil {
			m.LostPercent = finitePtr(s.LostPercent)
		}
		if s.JitterMs != nil {
			m.JitterMs = finitePtr(s.JitterMs)
		}
		if s.OutOfOrder != nil {
			m.OutOfOrder = s.OutOfOrder
		}
	}
	if c := end.CPUUtilizationPercent; c != nil {
		p.setCPU("local", c.HostUser, c.HostSystem, c.HostTotal)
		p.setCPU("remote", c.RemoteUser, c.RemoteSys, c.RemoteTotal)
		if c.HostRSS > 0 {
			p.setFigure(FigureRSSLocalPeak, float64(c.HostRSS))
		}
		if c.RemoteRSS > 0 {
			p.setFigure(FigureRSSRemotePeak, float64(c.RemoteRSS))
		}
	}
	var minRTT, sumRTT float64
	n := 0
	for _, st := range end.Streams {
		if st.Sender == nil || st.Sender.MeanRTT == nil || *st.Sender.MeanRTT <= 0 {
			continue
		}
		if r := st.Sender.MinRTT; r != nil && *r > 0 && (n == 0 || *r < minRTT) {
			minRTT = *r
		}
		sumRTT += *st.Sender.MeanRTT
		n++
	}
	if n > 0 {
		m.MeanRTTms = ptr(sumRTT / float64(n) / 1000)
		if minRTT > 0 {
			m.MinRTTms = ptr(minRTT / 1000)
		}
	}
}

func (p *Parsed) readIntervals(d *document) {
	for i, iv := range d.Intervals {
		for _, s := range iv.Streams {
			id := s.Socket
			p.Intervals = append(p.Intervals, intervalOf(i, &id, &s.docSum, s.SndCwnd, s.RTT, s.ReceiverBytes))
		}
		if iv.Sum != nil {
			p.Intervals = append(p.Intervals, intervalOf(i, nil, iv.Sum, nil, nil, nil))
		}
		if iv.SumBidirReverse != nil {
			p.Intervals = append(p.Intervals, intervalOf(i, nil, iv.SumBidirReverse, nil, nil, nil))
		}
	}
}

func intervalOf(i int, stream *int, s *docSum, cwnd *int64, rtt *float64, recvBytes *int64) Interval {
	iv := Interval{
		Index: i, Stream: stream, Start: s.Start, End: s.End,
		Bytes: s.Bytes, ReceivedBytes: recvBytes, BitsPerSecond: finitePtr(s.BitsPerSecond),
		Retransmits: s.Retransmits, SndCwnd: cwnd, RTTus: rtt,
		Packets: s.Packets, LostPackets: s.LostPackets, JitterMs: finitePtr(s.JitterMs), Omitted: s.Omitted,
	}
	if s.Sender != nil {
		iv.SenderRole = "server"
		if *s.Sender {
			iv.SenderRole = "client"
		}
	}
	return iv
}

func (p *Parsed) readHost(host string, e *docHostEnd) {
	if e.Role == "" && e.Host.Hostname == "" {
		return
	}
	var limits map[string]any
	if len(e.Limits) > 0 && string(e.Limits) != "null" {
		if json.Unmarshal(e.Limits, &limits) != nil {
			limits = nil
		}
	}
	if limits == nil {
		limits = map[string]any{}
	}
	for _, s := range e.Streams {
		if s.Socket.MTU > 0 {
			limits["mtu"] = s.Socket.MTU
			break
		}
	}
	lj, _ := json.Marshal(limits)
	p.Limits = append(p.Limits, HostLimits{Host: host, Hostname: e.Host.Hostname, Kernel: e.Host.System, Limits: string(lj)})
	if hc := e.HostCounters; hc != nil && len(hc.Samples) > 0 {
		// The host's use per interval, as the end sampled it.
		for _, s := range hc.Samples {
			hs := HostSample{Host: host, T: s.T, CPUUser: ptr(s.User), CPUSys: ptr(s.System), CPUSoftIRQ: ptr(s.SoftIRQ)}
			if s.MemUsedBytes > 0 {
				hs.MemUsed = ptr(s.MemUsedBytes)
			}
			p.Hosts = append(p.Hosts, hs)
		}
		p.setHostFigures(host, hc.Samples)
	} else if hc != nil && len(hc.CPUs) > 0 {
		// The first entry is the whole machine when /proc/stat's "cpu" line is there.
		c := hc.CPUs[0]
		if c.Name != "cpu" {
			for _, x := range hc.CPUs[1:] {
				c.User += x.User
				c.System += x.System
				c.SoftIRQ += x.SoftIRQ
			}
			k := float64(len(hc.CPUs))
			c.User, c.System, c.SoftIRQ = c.User/k, c.System/k, c.SoftIRQ/k
		}
		hs := HostSample{Host: host, T: hc.Seconds, CPUUser: ptr(c.User), CPUSys: ptr(c.System), CPUSoftIRQ: ptr(c.SoftIRQ)}
		if hc.MemUsedBytes > 0 {
			hs.MemUsed = ptr(hc.MemUsedBytes)
		}
		p.Hosts = append(p.Hosts, hs)
	}
}

// docHostSample is one of an end's host counters' samples.
type docHostSample struct {
	T            float64 `json:"t"`
	User         float64 `json:"user"`
	System       float64 `json:"system"`
	SoftIRQ      float64 `json:"softirq"`
	MemUsedBytes int64   `json:"mem_used_bytes"`
}

// setHostFigures keeps an end's host CPU (mean weighted by each sample's
// span, and the busiest sample) and peak memory in use from its samples,
// as figures a table can show (host is "local" or "remote").
func (p *Parsed) setHostFigures(host string, samples []docHostSample) {
	var busy, span, busiest float64
	var mem int64
	prev := 0.0
	for _, s := range samples {
		b := s.User + s.System + s.SoftIRQ
		if d := s.T - prev; d > 0 {
			busy += b * d
			span += d
		}
		prev = max(prev, s.T)
		busiest = max(busiest, b)
		mem = max(mem, s.MemUsedBytes)
	}
	if span > 0 {
		p.setFigure("host_cpu_"+host+"_mean", busy/span)
		p.setFigure("host_cpu_"+host+"_max", busiest)
	}
	if mem > 0 {
		p.setFigure("host_mem_"+host+"_peak_bytes", float64(mem))
	}
}

// setCPU keeps an end's process CPU, in percent of one core. All zeros
// is an end that did not report it (iperf3 writes the remote's as 0 when
// the server sent no results).
func (p *Parsed) setCPU(end string, user, system, total float64) {
	if user == 0 && system == 0 && total == 0 {
		return
	}
	p.setFigure("cpu_"+end+"_user", user)
	p.setFigure("cpu_"+end+"_system", system)
	p.setFigure("cpu_"+end+"_total", total)
}

func (p *Parsed) setFigure(name string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	if p.Summary.Figures == nil {
		p.Summary.Figures = map[string]float64{}
	}
	p.Summary.Figures[name] = v
}

// readBuffers keeps the socket buffers the kernel granted: the smallest
// send buffer of a sending stream and receive buffer of a receiving
// one, over both ends.
func (p *Parsed) readBuffers(ends ...*docHostEnd) {
	var snd, rcv int64
	low := func(cur, v int64) int64 {
		if v > 0 && (cur == 0 || v < cur) {
			return v
		}
		return cur
	}
	for _, e := range ends {
		for _, st := range e.Streams {
			if st.Sender {
				snd = low(snd, st.Socket.SndBufGranted)
			} else {
				rcv = low(rcv, st.Socket.RcvBufGranted)
			}
		}
	}
	if snd > 0 {
		p.setFigure(FigureSndbufGranted, float64(snd))
	}
	if rcv > 0 {
		p.setFigure(FigureRcvbufGranted, float64(rcv))
	}
}

// docSweep is what the archive reads of a UDPmon sweep.
type docSweep struct {
	Server    string    `json:"server"`
	StartedAt time.Time `json:"started_at"`
	Seconds   float64   `json:"seconds"`
	Failed    int       `json:"failed"`
	Points    []struct {
		Error                string  `json:"error"`
		Sent                 int64   `json:"sent"`
		Lost                 int64   `json:"lost"`
		AchievedSpacingNs    float64 `json:"achieved_spacing_ns"`
		AchievedSpacingP99Ns float64 `json:"achieved_spacing_p99_ns"`
	} `json:"points"`
}

// parseSweep summarises a UDPmon sweep: its time, the datagrams sent and
// received and the loss over every point. A sweep none of whose points
// ran is an error.
func parseSweep(sw *docSweep) *Parsed {
	p := &Parsed{Wireperf: true, Axes: map[string]Axis{}, Started: sw.StartedAt.UTC(), RemoteHost: sw.Server}
	var sent, lost, spaced int64
	var gapSum, gapP99 float64
	for _, pt := range sw.Points {
		sent, lost = sent+pt.Sent, lost+pt.Lost
		if pt.AchievedSpacingNs > 0 && pt.Sent > 1 {
			gapSum += pt.AchievedSpacingNs * float64(pt.Sent)
			spaced += pt.Sent
		}
		gapP99 = math.Max(gapP99, pt.AchievedSpacingP99Ns)
	}
	// The achieved gap: over several points, the mean weighted by the
	// datagrams each sent, and the worst point's p99.
	if spaced > 0 {
		p.setFigure(FigureSpacingAchieved, gapSum/float64(spaced)/1000)
	}
	if gapP99 > 0 {
		p.setFigure(FigureSpacingAchievedP99, gapP99/1000)
	}
	m := &p.Summary
	if sw.Seconds > 0 {
		m.Seconds = finitePtr(&sw.Seconds)
	}
	if sent > 0 {
		m.LostPercent = ptr(100 * float64(lost) / float64(sent))
	}
	if len(sw.Points) == 0 || sw.Failed == len(sw.Points) {
		p.Error = fmt.Sprintf("udpmon: %d of %d points failed", sw.Failed, len(sw.Points))
	}
	return p
}

func parseRR(d *document) *Parsed {
	res := d.Result
	p := &Parsed{Wireperf: true, Axes: map[string]Axis{}, Started: res.StartedAt, RemoteHost: res.ConnectHost,
		LocalHost: res.Local.Host.Hostname, LocalKernel: res.Local.Host.System, RemoteKernel: res.Remote.Host.System,
		Version: res.Local.Host.Version}
	p.readHost("local", &res.Local)
	p.readHost("remote", &res.Remote)
	p.readRR(&res.Local)
	if c := res.Local.CPU; c != nil {
		p.setCPU("local", c.User, c.System, c.Total)
	}
	if c := res.Remote.CPU; c != nil {
		p.setCPU("remote", c.User, c.System, c.Total)
	}
	return p
}

// readRR takes the request-response figures of the first point (one per
// request size; a campaign sweeps sizes as an axis).
func (p *Parsed) readRR(e *docHostEnd) {
	if e.RR == nil || len(e.RR.Points) == 0 {
		return
	}
	pt := e.RR.Points[0]
	m := &p.Summary
	m.RRp50us, m.RRp99us = finitePtr(pt.RTT.P50), finitePtr(pt.RTT.P99)
	if v := finitePtr(pt.RTT.Min); v != nil {
		m.MinRTTms = ptr(*v / 1000)
	}
	if v := finitePtr(pt.RTT.Mean); v != nil {
		m.MeanRTTms = ptr(*v / 1000)
	}
	if pt.Sent > 0 {
		m.LostPercent = ptr(100 * float64(pt.Lost) / float64(pt.Sent))
	}
	if len(e.RR.Points) == 1 && pt.RequestSize > 0 {
		p.Axes["length"] = numAxis(float64(pt.RequestSize), fmt.Sprint(pt.RequestSize))
	}
}

func ptr[T any](v T) *T { return &v }

// finitePtr drops NaN and infinities, which neither database stores alike.
func finitePtr(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}
