package plot

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// The builders below map a run's result (result.Result, as -J prints it
// and the archive stores it) onto the figures' inputs.

// FooterOf names a run: subject (a file name or run ID), the client and
// server hosts, the start time and the version that measured it.
func FooterOf(r *result.Result, subject string) Footer {
	f := Footer{Subject: subject, Date: r.StartedAt}
	client, server := r.Local, r.Remote
	if r.Local.Role == result.RoleServer {
		client, server = r.Remote, r.Local
	}
	for _, h := range []string{client.Host.Hostname, server.Host.Hostname} {
		if h != "" {
			f.Hosts = append(f.Hosts, h)
		}
	}
	if len(f.Hosts) < 2 && r.ConnectHost != "" {
		f.Hosts = append(f.Hosts, r.ConnectHost)
	}
	for _, v := range []string{r.Local.Host.Version, r.Remote.Host.Version} {
		if v != "" {
			f.Version = v
			break
		}
	}
	return f
}

func isUDP(r *result.Result) bool { return strings.EqualFold(r.Spec.Protocol, "udp") }

// TimelineOf is a run's timeline: goodput per interval and direction (the
// receiver's bytes; the sender's where the receiver's are missing), and
// per sending stream its TCP_INFO timeline (cwnd, RTT, retransmits
// between samples), or for UDP the receiver's loss and jitter per
// interval. A stream without a timeline falls back to the TCP_INFO the
// intervals carry.
func TimelineOf(r *result.Result, subject string) (TimelineInput, error) {
	in := TimelineInput{Title: runTitle(r), Footer: FooterOf(r, subject)}
	rows := r.IntervalRows()
	dirs := r.Directions()
	for _, d := range dirs {
		name := d.Label()
		var good, loss, jitter []Point
		for _, row := range rows {
			if row.Omitted || row.End-row.Start <= 0 {
				continue
			}
			t := (row.Start + row.End) / 2
			s := row.SumDirection(d.SenderRole)
			// Each side's rate over its own end's span, drawn at its middle.
			switch {
			case s.HasReceived && s.ReceivedSpan.Seconds() > 0:
				sp := s.ReceivedSpan
				good = append(good, Point{(sp.Start + sp.End) / 2, result.Rate(s.ReceivedBytes, sp.Seconds())})
			case s.HasSent && s.SentSpan.Seconds() > 0:
				sp := s.SentSpan
				good = append(good, Point{(sp.Start + sp.End) / 2, result.Rate(s.SentBytes, sp.Seconds())})
			}
			if isUDP(r) {
				if u := receivedUDP(row, d.SenderRole); u != nil {
					loss = append(loss, Point{t, u.LostPercent()})
					if u.JitterSamples > 0 {
						jitter = append(jitter, Point{t, u.JitterMs})
					}
				}
			}
		}
		in.Goodput = append(in.Goodput, TimeSeries{Name: name, Points: good})
		if isUDP(r) {
			in.Loss = append(in.Loss, TimeSeries{Name: name, Points: loss})
			in.Jitter = append(in.Jitter, TimeSeries{Name: name, Points: jitter})
		}
	}
	if !isUDP(r) {
		tcpTimelines(r, rows, len(dirs) > 1, &in)
	}
	if !hasPoints(in.Goodput) && !hasPoints(in.Cwnd) && !hasPoints(in.Loss) {
		return in, errors.New("the run has no intervals to draw (was it run with -i 0?)")
	}
	return in, nil
}

// receivedUDP adds the receivers' UDP figures of one direction in a row.
func receivedUDP(row result.IntervalRow, senderRole string) *result.UDP {
	var sum *result.UDP
	for _, f := range row.Flows {
		if f.SenderRole != senderRole || f.Received == nil || f.Received.UDP == nil {
			continue
		}
		u := f.Received.UDP
		if sum == nil {
			sum = &result.UDP{}
		}
		sum.Received += u.Received
		sum.Lost += u.Lost
		sum.Expected += u.Expected
		// Jitter does not add up; the flows' largest speaks for the row.
		if u.JitterSamples > 0 && u.JitterMs >= sum.JitterMs {
			sum.JitterMs = u.JitterMs
		}
		sum.JitterSamples += u.JitterSamples
	}
	return sum
}

// tcpTimelines adds each sending stream's cwnd, RTT and retransmits.
func tcpTimelines(r *result.Result, rows []result.IntervalRow, bidir bool, in *TimelineInput) {
	for _, f := range r.Flows() {
		s := f.Sent
		if s == nil {
			continue
		}
		name := fmt.Sprintf("stream %d", f.ID)
		if bidir {
			name += " " + result.Direction{SenderRole: f.SenderRole}.Label()
		}
		var cwnd, rtt, retr []Point
		if tl := s.TCPTimeline; tl != nil && len(tl.Samples) > 0 {
			var prev uint32
			for i, smp := range tl.Samples {
				cwnd = append(cwnd, Point{smp.T, float64(smp.SndCwnd) * float64(smp.SndMSS)})
				rtt = append(rtt, Point{smp.T, float64(smp.RTTus) / 1000})
				if i > 0 {
					d := 0.0
					if smp.TotalRetrans >= prev {
						d = float64(smp.TotalRetrans - prev)
					}
					retr = append(retr, Point{smp.T, d})
				}
				prev = smp.TotalRetrans
			}
		} else {
			for _, row := range rows {
				for _, fi := range row.Flows {
					if fi.ID != f.ID || fi.Sent == nil || !fi.Sent.HasTCPInfo || row.Omitted {
						continue
					}
					cwnd = append(cwnd, Point{row.End, float64(fi.Sent.CwndBytes)})
					rtt = append(rtt, Point{row.End, float64(fi.Sent.RTTus) / 1000})
					retr = append(retr, Point{row.End, float64(fi.Sent.Retransmits)})
				}
			}
		}
		in.Cwnd = append(in.Cwnd, TimeSeries{Name: name, Points: cwnd})
		in.RTT = append(in.RTT, TimeSeries{Name: name, Points: rtt})
		in.Retransmits = append(in.Retransmits, TimeSeries{Name: name, Points: retr})
	}
}

func runTitle(r *result.Result) string {
	if r.Spec.Title != "" {
		return r.Spec.Title
	}
	proto := strings.ToUpper(r.Spec.Protocol)
	if proto == "" {
		proto = "TCP"
	}
	t := fmt.Sprintf("%s, %d stream(s)", proto, max(1, r.Spec.Streams))
	if r.Spec.Duration > 0 {
		t += ", " + r.Spec.Duration.String()
	}
	switch {
	case r.Spec.Bidir:
		t += ", both directions"
	case r.Spec.Reverse:
		t += ", server to client"
	}
	return t
}

// rrOf is the end of an rr run that holds the client's points.
func rrOf(r *result.Result) *result.RR {
	for _, e := range []*result.End{&r.Local, &r.Remote} {
		if e.RR != nil && len(e.RR.Points) > 0 {
			return e.RR
		}
	}
	return nil
}

// LatencyOf is an rr run's RTT distributions, one per request size (or
// load phase).
func LatencyOf(r *result.Result, subject string) (LatencyInput, error) {
	rr := rrOf(r)
	if rr == nil {
		return LatencyInput{}, errors.New("not a request-response (rr) run: no RTT points")
	}
	in := LatencyInput{Title: "Request-response RTT, " + rr.Mode, Footer: FooterOf(r, subject)}
	for _, p := range rr.Points {
		name := p.Label
		if name == "" {
			name = fmt.Sprintf("%d B", p.RequestSize)
		}
		s := LatencySeries{Name: name, P50: p.RTT.P50, P99: p.RTT.P99, P999: p.RTT.P999}
		if p.RTTHistogram != nil {
			for _, b := range p.RTTHistogram.Buckets {
				s.Buckets = append(s.Buckets, Bucket{From: b.From, To: b.To, Count: b.Count})
			}
		}
		in.Series = append(in.Series, s)
	}
	return in, nil
}

// LoadOf is an rr --load run: its phases back to back with their probes'
// RTT percentiles, and the load's own RTT over time from its senders'
// TCP_INFO timelines, placed in the loaded phase. The probes' single
// RTTs are not kept over time, only their distribution per phase.
func LoadOf(r *result.Result, subject string) (LoadInput, error) {
	rr := rrOf(r)
	if rr == nil || rr.Load == nil {
		return LoadInput{}, errors.New("not a latency-under-load run (rr --load): no load phases")
	}
	in := LoadInput{Footer: FooterOf(r, subject)}
	l := rr.Load
	in.Title = fmt.Sprintf("Latency under load: %d %s stream(s), %s", l.Streams, strings.ToUpper(l.Protocol), l.Direction)
	t := 0.0
	loadedAt := -1.0
	for _, p := range rr.Points {
		ph := LoadPhase{Label: p.Label, Start: t, End: t + p.Seconds, P50: p.RTT.P50 / 1000, P99: p.RTT.P99 / 1000}
		if p.Label == "loaded" {
			loadedAt = t
		}
		in.Phases = append(in.Phases, ph)
		t = ph.End
	}
	if lr := l.LoadResult; lr != nil && loadedAt >= 0 {
		var flows []result.Flow
		flows = append(flows, lr.Flows()...)
		sort.Slice(flows, func(i, j int) bool { return flows[i].ID < flows[j].ID })
		for _, f := range flows {
			if f.Sent == nil || f.Sent.TCPTimeline == nil {
				continue
			}
			var pts []Point
			for _, smp := range f.Sent.TCPTimeline.Samples {
				pts = append(pts, Point{loadedAt + smp.T, float64(smp.RTTus) / 1000})
			}
			in.RTT = append(in.RTT, TimeSeries{Name: fmt.Sprintf("load stream %d TCP RTT", f.ID), Points: pts})
		}
	}
	return in, nil
}

// UDPMonOf is a udpmon sweep: the received wire rate against the target
// spacing, per payload size, with each size's wire bits for the 1/t
// curve; loss and re-ordering as shares of the datagrams sent.
func UDPMonOf(sw *udpmon.Sweep, subject string) (UDPMonInput, error) {
	if sw == nil || len(sw.Points) == 0 {
		return UDPMonInput{}, errors.New("the udpmon sweep has no points")
	}
	in := UDPMonInput{
		Title:  "UDPmon: received wire rate against spacing",
		Rate:   "Received wire rate",
		Footer: Footer{Subject: subject, Hosts: []string{sw.Server}, Date: sw.StartedAt},
	}
	bySize := map[int]*UDPMonSeries{}
	var sizes []int
	for _, p := range sw.Points {
		s := bySize[p.Size]
		if s == nil {
			s = &UDPMonSeries{Name: fmt.Sprintf("%d B", p.Size), DatagramBits: float64(udpmon.WireBytes(p.Size)) * 8}
			bySize[p.Size] = s
			sizes = append(sizes, p.Size)
		}
		reordered := 0.0
		if p.Sent > 0 {
			reordered = 100 * float64(p.Reordered) / float64(p.Sent)
		}
		// At the spacing the sender achieved: a sender that could not hold
		// 5 µs and sent every 20 µs measured the path at 20 µs.
		spacing := float64(p.Spacing.Nanoseconds()) / 1000
		if p.AchievedSpacingNs > 0 {
			spacing = p.AchievedSpacingNs / 1000
		}
		s.Points = append(s.Points, UDPMonPoint{
			SpacingUs:        spacing,
			BitsPerSecond:    p.RecvWireBps,
			LossPercent:      p.LossPercent,
			ReorderedPercent: reordered,
		})
	}
	sort.Sort(sort.Reverse(sort.IntSlice(sizes)))
	for _, size := range sizes {
		s := bySize[size]
		sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].SpacingUs < s.Points[j].SpacingUs })
		in.Series = append(in.Series, *s)
	}
	return in, nil
}
