package logimport

import (
	"fmt"
	"math"
	"strconv"

	"github.com/wireperf/wireperf/internal/archive"
)

// totals splits a test's lines into each ID's total (the last line from
// 0 that spans all of the ID's others) and its intervals.
func (t *Test) totals() (totals map[string]Line, intervals []Line, report *Line) {
	totals = map[string]Line{}
	maxEnd := map[string]float64{}
	for _, l := range t.Lines {
		if !l.ServerReport && l.End > maxEnd[l.ID] {
			maxEnd[l.ID] = l.End
		}
	}
	last := map[string]int{}
	for i, l := range t.Lines {
		if l.ServerReport {
			ll := l
			report = &ll
			continue
		}
		if l.Start == 0 && l.End >= maxEnd[l.ID] {
			last[l.ID] = i
		}
	}
	for i, l := range t.Lines {
		if l.ServerReport {
			continue
		}
		if j, ok := last[l.ID]; ok && j == i {
			totals[l.ID] = l
			continue
		}
		intervals = append(intervals, l)
	}
	return totals, intervals, report
}

// sum is the test's total: [SUM], or the streams' totals added up.
func (t *Test) sum() (Line, bool) {
	totals, _, _ := t.totals()
	if s, ok := totals["SUM"]; ok {
		return s, true
	}
	var s Line
	n := 0
	for id, l := range totals {
		if id == "SUM" {
			continue
		}
		if n == 0 || l.End > s.End {
			s.End = l.End
		}
		s.Bytes += l.Bytes
		s.BitsPerSecond += l.BitsPerSecond
		if l.Jitter != nil {
			j := l.Jitter
			s.Jitter = j
		}
		if l.Lost != nil && l.Total != nil {
			lost, total := *l.Lost, *l.Total
			if s.Lost != nil {
				lost = addCapped(lost, *s.Lost)
				total = addCapped(total, *s.Total)
			}
			s.Lost, s.Total = &lost, &total
		}
		if l.OutOfOrder != nil {
			ooo := *l.OutOfOrder
			if s.OutOfOrder != nil {
				ooo = addCapped(ooo, *s.OutOfOrder)
			}
			s.OutOfOrder = &ooo
		}
		n++
	}
	return s, n > 0
}

// addCapped adds two counts, each within maxCount of a line or a sum
// already capped, stopping just past maxTestBytes, where fill refuses the
// test, rather than wrapping around.
func addCapped(a, b int64) int64 {
	if s := a + b; s <= maxTestBytes {
		return s
	}
	return maxTestBytes + 1
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// maxTestBytes bounds a test's total bytes, its streams' added up: an
// int64 holds it.
const maxTestBytes = 1 << 62

// fill puts the test's summary, intervals and axes into a run. Each line
// is in range (intervalLine), but the streams of a forged log may add up
// beyond an int64: that is the error.
func (t *Test) fill(r *archive.Run) error {
	r.LocalHost, r.RemoteHost = t.LocalHost, t.RemoteHost
	r.Rounded = t.Rounded
	total, ok := t.sum()
	_, intervals, report := t.totals()
	over := func(n *int64) bool { return n != nil && *n > maxTestBytes }
	if ok && (total.Bytes > maxTestBytes || over(total.Lost) || over(total.Total) || over(total.OutOfOrder)) {
		return fmt.Errorf("lines %d-%d: the streams add up to more than %d bytes or datagrams: not a figure a test measures", t.FirstLine, t.LastLine, int64(maxTestBytes))
	}
	m := &r.Summary
	if ok {
		bytes := int64(math.Round(total.Bytes))
		m.Seconds = f64(total.End - total.Start)
		// A server received what it reports; a client (or a log that
		// does not say) sent it.
		if t.Role == "server" || total.Jitter != nil {
			m.ReceivedBytes, m.ReceivedBps = &bytes, f64(total.BitsPerSecond)
		} else {
			m.SentBytes, m.SentBps = &bytes, f64(total.BitsPerSecond)
		}
		lossOf(m, &total)
	}
	if report != nil { // a UDP client's copy of the server's figures
		bytes := int64(math.Round(report.Bytes))
		m.ReceivedBytes, m.ReceivedBps = &bytes, f64(report.BitsPerSecond)
		lossOf(m, report)
	}
	idx := map[string]int{}
	for _, l := range intervals {
		iv := archive.Interval{Index: idx[l.ID], Start: l.Start, End: l.End, Bytes: i64(int64(math.Round(l.Bytes))),
			BitsPerSecond: f64(l.BitsPerSecond), JitterMs: l.Jitter, LostPackets: l.Lost, Packets: l.Total, SenderRole: senderRole(t.Role)}
		idx[l.ID]++
		if l.ID != "SUM" {
			if id, err := strconv.Atoi(l.ID); err == nil {
				iv.Stream = &id
			}
		}
		r.Intervals = append(r.Intervals, iv)
	}
	r.Axes = map[string]archive.Axis{"proto": {Label: t.Proto}}
	if n := len(t.Streams); n > 0 {
		r.Axes["parallel"] = archive.Axis{Num: f64(float64(n)), Label: strconv.Itoa(n)}
	}
	switch {
	case t.Window != nil:
		r.Axes["window"] = archive.Axis{Num: f64(t.Window.Value), Label: t.Window.Label}
	case t.DefaultWindow:
		r.Axes["window"] = archive.Axis{Label: "default"}
	}
	// iperf2 prints the sending socket's buffer on a client, the
	// receiving socket's on a server.
	if g := t.Granted; g != nil && g.Value > 0 {
		name := archive.FigureSndbufGranted
		if t.Role == "server" {
			name = archive.FigureRcvbufGranted
		}
		r.Summary.Figures = map[string]float64{name: g.Value}
	}
	if t.Length != nil {
		r.Axes["length"] = archive.Axis{Num: f64(float64(*t.Length)), Label: strconv.FormatInt(*t.Length, 10)}
	}
	switch {
	case t.Duration != nil:
		r.Axes["time"] = archive.Axis{Num: t.Duration, Label: strconv.FormatFloat(*t.Duration, 'f', -1, 64) + "s"}
	case ok:
		// The test's length as asked, read from its total's span: iperf
		// stops within a fraction of a second of -t.
		d := math.Round(total.End - total.Start)
		if d > 0 {
			r.Axes["time"] = archive.Axis{Num: f64(d), Label: fmt.Sprint(d) + "s"}
		}
	}
	return nil
}

func lossOf(m *archive.Summary, l *Line) {
	if l.Jitter != nil {
		m.JitterMs = f64(*l.Jitter)
	}
	if l.Lost != nil && l.Total != nil && *l.Total > 0 {
		m.LostPercent = f64(100 * float64(*l.Lost) / float64(*l.Total))
	}
	if l.OutOfOrder != nil {
		m.OutOfOrder = l.OutOfOrder
	} else if m.LostPercent != nil && m.OutOfOrder == nil {
		zero := int64(0) // iperf2 prints the line only when some were
		m.OutOfOrder = &zero
	}
}

// senderRole is who sent the data an iperf2 log reports: the client,
// whichever end's log it is (iperf2 tests send from client to server).
func senderRole(role string) string {
	if role == "" {
		return ""
	}
	return "client"
}
