package emit

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// iperf2's output, for users and scripts that read it: -y C (Iperf2CSV)
// and -e (Iperf2Enhanced). Both show each stream from the local end, as
// iperf2's client does: what it sent, or with -R what it received.

// localSide is a flow's figures in a row as the local end saw them.
type localSide struct {
	id     int
	role   string // the flow's sender's role
	sends  bool   // the local end sends on it
	si     *result.StreamInterval
	span   result.Span
	stream *result.Stream // the local end's totals, in Summary
	// trip is the flow's receiver's --trip-times figures, whichever end
	// received, over tripSpan; tripBytes are the receiver's bytes then.
	trip      *result.TripTimes
	tripSpan  float64
	tripBytes int64
}

// localSides lists a row's flows from the local end, in ID order.
func localSides(r *result.Result, row result.IntervalRow) []localSide {
	var out []localSide
	for _, f := range row.Flows {
		role := senderRoleOf(f.SenderRole)
		ls := localSide{id: f.ID, role: role, sends: role == r.Local.Role}
		if f.Received != nil {
			ls.trip, ls.tripBytes, ls.tripSpan = f.Received.TripTimes, f.Received.Bytes, f.ReceivedSpan.Seconds()
		}
		if ls.sends {
			ls.si, ls.span = f.Sent, f.SentSpan
		} else {
			ls.si, ls.span = f.Received, f.ReceivedSpan
		}
		// A receiver's tail can take back bytes its kernel counted in
		// the rows before (they add up to the totals): iperf2's columns
		// have no negative count, so such a row is left out.
		if ls.si != nil && ls.si.Bytes >= 0 {
			out = append(out, ls)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// streamAddrs are a stream's ends for iperf2's CSV columns.
type streamAddrs struct {
	localHost, remoteHost string
	localPort, remotePort int
}

func addrsOf(local, remote string) streamAddrs {
	lh, lp := splitAddrNum(local)
	rh, rp := splitAddrNum(remote)
	return streamAddrs{localHost: lh, localPort: lp, remoteHost: rh, remotePort: rp}
}

// Iperf2CSV writes iperf2's -y C lines: per stream and interval
// timestamp,source_address,source_port,destination_address,
// destination_port,transfer_id,interval,transferred_bytes,bits_per_second,
// and for a UDP receiver's figures jitter (ms), lost, total datagrams,
// loss percent and out-of-order datagrams. Several streams add a sum line
// with transfer ID -1; the last lines are the whole test's. A UDP
// client that sends ends each stream with the server's figures, as
// iperf2's server report. The byte counts are exact. Each row is written
// when the next comes, or at the summary (rowHolder).
type Iperf2CSV struct {
	W io.Writer

	start time.Time
	addrs map[int]streamAddrs
	held  rowHolder
}

// rowHolder holds an iperf2 emitter's last row, written when the next
// comes or at the summary: a tail shorter than a tenth of -i joins it, so
// no row is zero-length at -y C's tenths of a second (6.0-6.0) and none
// has a short tail's rate (Span.ShortTail). The rows still add up to the
// totals.
type rowHolder struct {
	row *result.IntervalRow
	r   *result.Result
}

// next takes a row and returns the one to write now, if any.
func (h *rowHolder) next(r *result.Result, row result.IntervalRow) (*result.Result, *result.IntervalRow) {
	if h.row != nil && row.ShortTail(r.Spec.Interval) {
		joined := h.row.Join(row)
		h.row = nil
		return r, &joined
	}
	prevR, prev := h.flush()
	h.row, h.r = &row, r
	return prevR, prev
}

// flush returns the held row, if any, and holds none.
func (h *rowHolder) flush() (*result.Result, *result.IntervalRow) {
	row := h.row
	h.row = nil
	return h.r, row
}

// Header notes the streams' addresses and the start time.
func (c *Iperf2CSV) Header(h Header) error {
	c.start = h.StartedAt
	if c.start.IsZero() {
		c.start = time.Now()
	}
	c.addrs = map[int]streamAddrs{}
	for _, s := range h.Streams {
		c.addrs[s.ID] = addrsOf(s.LocalAddr, s.RemoteAddr) // the client's view
	}
	return nil
}

// Interval writes a line per stream of the local end, and a sum line.
func (c *Iperf2CSV) Interval(r *result.Result, row result.IntervalRow) error {
	if row.Omitted {
		return nil // iperf2 has no omitted start; its lines add up to its totals
	}
	if r, row := c.held.next(r, row); row != nil {
		return c.writeRow(r, *row)
	}
	return nil
}

// writeRow writes a row's lines.
func (c *Iperf2CSV) writeRow(r *result.Result, row result.IntervalRow) error {
	var b strings.Builder
	sides := localSides(r, row)
	for _, ls := range sides {
		c.line(&b, row.End, ls.id, row.Start, row.End, ls.si.Bytes, ls.span.Seconds(), csvUDP(ls.sends, ls.si.UDP))
	}
	c.sums(&b, r, sides, row.Start, row.End, func(ls localSide) (int64, float64) { return ls.si.Bytes, ls.span.Seconds() })
	_, err := io.WriteString(c.W, b.String())
	return err
}

// Summary writes the whole test's lines.
func (c *Iperf2CSV) Summary(r *result.Result) error {
	if r, row := c.held.flush(); row != nil {
		if err := c.writeRow(r, *row); err != nil {
			return err
		}
	}
	if c.addrs == nil {
		c.addrs = map[int]streamAddrs{}
		c.start = r.StartedAt
	}
	var b strings.Builder
	var sides []localSide
	for _, f := range r.Flows() {
		role := senderRoleOf(f.SenderRole)
		ls := localSide{id: f.ID, role: role, sends: role == r.Local.Role, stream: f.Received}
		if ls.sends {
			ls.stream = f.Sent
		}
		if rcv := f.Received; rcv != nil {
			ls.trip, ls.tripBytes, ls.tripSpan = rcv.TripTimes, rcv.Bytes, rcv.Seconds()
		}
		if ls.stream == nil {
			continue
		}
		if _, ok := c.addrs[f.ID]; !ok {
			c.addrs[f.ID] = addrsOf(ls.stream.LocalAddr, ls.stream.RemoteAddr)
		}
		sides = append(sides, ls)
		s := ls.stream
		c.line(&b, s.End, ls.id, s.Start, s.End, s.Bytes, s.Seconds(), csvUDP(ls.sends, s.UDP))
	}
	c.sums(&b, r, sides, 0, 0, func(ls localSide) (int64, float64) { return ls.stream.Bytes, ls.stream.Seconds() })
	// A UDP sender's server report: the receiver's figures.
	for _, f := range r.Flows() {
		if senderRoleOf(f.SenderRole) == r.Local.Role && f.Received != nil && f.Received.UDP != nil {
			s := f.Received
			c.line(&b, s.End, f.ID, s.Start, s.End, s.Bytes, s.Seconds(), csvUDP(false, s.UDP))
		}
	}
	_, err := io.WriteString(c.W, b.String())
	return err
}

// sums adds a sum line (ID -1) per direction with several streams; a
// zero span takes the streams' own.
func (c *Iperf2CSV) sums(b *strings.Builder, r *result.Result, sides []localSide, start, end float64, fig func(localSide) (int64, float64)) {
	for _, role := range []string{result.RoleClient, result.RoleServer} {
		var bytes int64
		var n int
		var seconds float64
		s0, e0 := start, end
		for _, ls := range sides {
			if ls.role != role {
				continue
			}
			by, sec := fig(ls)
			bytes += by
			seconds = max(seconds, sec)
			if ls.stream != nil {
				if n == 0 || ls.stream.Start < s0 {
					s0 = ls.stream.Start
				}
				e0 = max(e0, ls.stream.End)
			}
			n++
		}
		if n < 2 {
			continue
		}
		if end > start {
			seconds = end - start
		} else {
			seconds = e0 - s0
		}
		c.line(b, e0, -1, s0, e0, bytes, seconds, "")
	}
}

// line writes one CSV line; at is the report's time since the start.
func (c *Iperf2CSV) line(b *strings.Builder, at float64, id int, start, end float64, bytes int64, seconds float64, udp string) {
	a := c.addrs[id]
	if id == -1 {
		for _, x := range c.addrs { // a sum: the hosts, without a port
			a = x
			a.localPort = 0
			break
		}
	}
	ts := c.start.Add(time.Duration(at * float64(time.Second))).Local().Format("20060102150405")
	fmt.Fprintf(b, "%s,%s,%d,%s,%d,%d,%.1f-%.1f,%d,%d%s\n", ts, a.localHost, a.localPort, a.remoteHost, a.remotePort,
		id, start, end, bytes, int64(result.Rate(bytes, seconds)), udp)
}

// csvUDP is a UDP receiver's extra columns.
func csvUDP(sends bool, u *result.UDP) string {
	if sends || u == nil {
		return ""
	}
	return fmt.Sprintf(",%.3f,%d,%d,%.3f,%d", u.JitterMs, u.Lost, u.Expected, u.LostPercent(), u.Reordered)
}

// Iperf2Enhanced writes iperf2's enhanced text (-e, as iperf2 2.1 prints
// it with -e -i 1): a TCP sender's rows add Write/Err (writes, and
// failed writes), Rtry (retransmits), Cwnd/RTT(var) and NetPwr (the
// rate in bytes/s over the RTT, scaled by 1e-6), a UDP sender's Write/Err
// and PPS; a receiver's rows are iperf2's plain ones, with jitter and
// loss for UDP. A row's writes are the write calls counted during it, and
// the total line's are their sum. Rows are written one behind, as -y C's
// are (rowHolder), so that a short tail joins the row before it.
type Iperf2Enhanced struct {
	W   io.Writer
	Opt Options

	columnsDone bool
	lastTCP     map[int]result.StreamInterval // each stream's last sample, for its total line
	held        rowHolder
}

const iperf2Rule = "------------------------------------------------------------"

// Header writes iperf2's client banner and the streams' connections.
func (e *Iperf2Enhanced) Header(h Header) error {
	var b strings.Builder
	host, port := splitAddr(h.ServerAddr)
	proto := "TCP"
	if isUDP(h.Spec) {
		proto = "UDP"
	}
	fmt.Fprintln(&b, iperf2Rule)
	fmt.Fprintf(&b, "Client connecting to %s, %s port %s (%d flows)\n", host, proto, port, len(h.Streams))
	if proto == "UDP" {
		fmt.Fprintf(&b, "Sending %d byte datagrams\n", h.Spec.Length)
	} else {
		fmt.Fprintf(&b, "Write buffer size: %d Byte\n", h.Spec.Length)
	}
	if len(h.Streams) > 0 {
		sock := h.Streams[0].Socket
		size := sock.SndBufGranted
		if !h.Streams[0].Sender {
			size = sock.RcvBufGranted
		}
		what := "TCP window size"
		if proto == "UDP" {
			what = "UDP buffer size"
		}
		note := "(default)"
		if h.Spec.Window > 0 {
			note = fmt.Sprintf("(WARNING: requested %s)", iperf2Size(h.Spec.Window))
		}
		fmt.Fprintf(&b, "%s: %s %s\n", what, iperf2Size(size), note)
	}
	fmt.Fprintln(&b, iperf2Rule)
	for _, s := range h.Streams {
		fmt.Fprintf(&b, "[%3d] local %s connected with %s\n", s.ID, describeAddr(s.LocalAddr), describeAddr(s.RemoteAddr))
	}
	_, err := io.WriteString(e.W, b.String())
	return err
}

// iperf2Size renders a buffer size as iperf2 does: "85.0 KByte".
func iperf2Size(n int64) string {
	return strings.TrimSuffix(strings.TrimSpace(window(uint64(max(n, 0)))), "s")
}

// Interval writes a row per stream of the local end, and [SUM] rows.
func (e *Iperf2Enhanced) Interval(r *result.Result, row result.IntervalRow) error {
	if row.Omitted {
		return nil
	}
	if r, row := e.held.next(r, row); row != nil {
		return e.writeRow(r, *row)
	}
	return nil
}

// writeRow writes a row's lines.
func (e *Iperf2Enhanced) writeRow(r *result.Result, row result.IntervalRow) error {
	var b strings.Builder
	sides := localSides(r, row)
	if !e.columnsDone && len(sides) > 0 {
		e.columnsDone = true
		b.WriteString(withTrip(iperf2Columns(r, sides[0].sends), iperf2TripColumns(r)))
	}
	if e.lastTCP == nil {
		e.lastTCP = map[int]result.StreamInterval{}
	}
	for _, ls := range sides {
		if ls.si.HasTCPInfo {
			e.lastTCP[ls.id] = *ls.si
		}
		writes := rowWrites(ls.si, r.Spec.Length)
		if ls.si.UDP != nil && ls.sends {
			writes = ls.si.UDP.Sent
		}
		line := e.row(r, fmt.Sprintf("[%3d]", ls.id), row.Start, row.End, ls.sends, ls.si.Bytes, ls.span.Seconds(),
			writes, ls.si.Retransmits, ls.si, ls.si.UDP)
		b.WriteString(withTrip(line, iperf2Trip(ls.trip, r.Spec.Length, ls.tripBytes, ls.tripSpan, e.Opt.Format)))
	}
	e.sumRows(&b, r, sides, row.Start, row.End)
	_, err := io.WriteString(e.W, b.String())
	return err
}

// rowWrites is a row's write count: the calls the stream counted during
// it, from the counter its total's Calls comes from, so the rows add up to
// the total. A record without them (an iperf3 peer's, or older) has its
// bytes over the write length, as every write of a timed test is whole.
func rowWrites(si *result.StreamInterval, length int) int64 {
	if si.Calls > 0 || si.Bytes == 0 {
		return si.Calls
	}
	return ceilDiv(si.Bytes, int64(length))
}

// iperf2Columns is the column header of the local end's rows.
func iperf2Columns(r *result.Result, sends bool) string {
	switch {
	case sends && isUDP(r.Spec):
		return "[ ID] Interval        Transfer     Bandwidth      Write/Err  PPS\n"
	case sends:
		return "[ ID] Interval        Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT(var)        NetPwr\n"
	case isUDP(r.Spec):
		return "[ ID] Interval        Transfer     Bandwidth        Jitter   Lost/Total Datagrams\n"
	}
	return "[ ID] Interval        Transfer     Bandwidth\n"
}

// row renders one stream's (or a sum's, si nil) row.
func (e *Iperf2Enhanced) row(r *result.Result, tag string, start, end float64, sends bool, bytes int64, seconds float64,
	writes, retr int64, si *result.StreamInterval, u *result.UDP) string {
	transfer := strings.TrimSpace(units.FormatTransfer(float64(bytes), e.Opt.Format))
	rate := result.Rate(bytes, seconds)
	head := fmt.Sprintf("%s %4.2f-%4.2f sec  %s  %s", tag, start, end, transfer, strings.TrimSpace(units.FormatRate(rate, e.Opt.Format)))
	switch {
	case sends && u != nil:
		pps := 0.0
		if seconds > 0 {
			pps = float64(u.Sent) / seconds
		}
		return fmt.Sprintf("%s  %d/%d %8.0f pps\n", head, writes, u.SendErrors, pps)
	case sends && !isUDP(r.Spec):
		if si == nil || !si.HasTCPInfo {
			return fmt.Sprintf("%s  %d/0 %10d\n", head, writes, retr)
		}
		return fmt.Sprintf("%s  %d/0 %10d %8dK/%d(%d) us  %s\n", head, writes, retr, si.CwndBytes/1024, si.RTTus, si.RTTVarus,
			netPower(rate, si.RTTus))
	case u != nil:
		return fmt.Sprintf("%s  %6.3f ms %d/%d (%.2g%%)\n", head, u.JitterMs, u.Lost, u.Expected, u.LostPercent())
	}
	return head + "\n"
}

// sumRows writes a [SUM] row per direction with several streams. With
// --trip-times its latency columns are the streams' blocks taken as one
// set (result.JoinTripTimes: the counts added, the pooled mean and
// stdev, the lowest min and the highest max), not an average of the
// streams' figures, and its in-flight bytes those of the streams' bytes
// together.
func (e *Iperf2Enhanced) sumRows(b *strings.Builder, r *result.Result, sides []localSide, start, end float64) {
	for _, role := range []string{result.RoleClient, result.RoleServer} {
		var bytes, writes, retr int64
		n := 0
		sends := false
		var trip *result.TripTimes
		var tripBytes int64
		var tripSpan float64
		for _, ls := range sides {
			if ls.role != role {
				continue
			}
			n++
			sends = ls.sends
			if ls.trip != nil {
				trip = result.JoinTripTimes(trip, ls.trip)
				tripBytes += ls.tripBytes
				tripSpan = max(tripSpan, ls.tripSpan)
			}
			if ls.stream != nil {
				bytes += ls.stream.Bytes
				writes += ls.stream.Calls
				retr += ls.stream.Retransmits
			} else {
				bytes += ls.si.Bytes
				writes += rowWrites(ls.si, r.Spec.Length)
				retr += ls.si.Retransmits
			}
		}
		if n < 2 {
			continue
		}
		var u *result.UDP
		if sends && isUDP(r.Spec) {
			u = &result.UDP{Sent: writes}
		}
		line := e.row(r, "[SUM]", start, end, sends, bytes, end-start, writes, retr, nil, u)
		b.WriteString(withTrip(line, iperf2Trip(trip, r.Spec.Length, tripBytes, tripSpan, e.Opt.Format)))
	}
}

// Summary writes each stream's total row, and a UDP sender's server
// report.
func (e *Iperf2Enhanced) Summary(r *result.Result) error {
	if r, row := e.held.flush(); row != nil {
		if err := e.writeRow(r, *row); err != nil {
			return err
		}
	}
	var b strings.Builder
	var sides []localSide
	var start, end float64
	for _, f := range r.Flows() {
		role := senderRoleOf(f.SenderRole)
		ls := localSide{id: f.ID, role: role, sends: role == r.Local.Role, stream: f.Received}
		if ls.sends {
			ls.stream = f.Sent
		}
		if rcv := f.Received; rcv != nil {
			ls.trip, ls.tripBytes, ls.tripSpan = rcv.TripTimes, rcv.Bytes, rcv.Seconds()
		}
		if ls.stream == nil {
			continue
		}
		s := ls.stream
		if len(sides) == 0 || s.Start < start {
			start = s.Start
		}
		end = max(end, s.End)
		sides = append(sides, ls)
		var last *result.StreamInterval
		if li, ok := e.lastTCP[f.ID]; ok {
			last = &li
		}
		writes := s.Calls
		if s.UDP != nil && ls.sends {
			writes = s.UDP.Sent
		}
		line := e.row(r, fmt.Sprintf("[%3d]", f.ID), s.Start, s.End, ls.sends, s.Bytes, s.Seconds(), writes, s.Retransmits, last, s.UDP)
		if rcv := f.Received; rcv != nil {
			line = withTrip(line, iperf2Trip(rcv.TripTimes, r.Spec.Length, rcv.Bytes, rcv.Seconds(), e.Opt.Format))
		}
		b.WriteString(line)
		if ls.sends && s.UDP != nil {
			fmt.Fprintf(&b, "[%3d] Sent %d datagrams\n", f.ID, s.UDP.Sent)
			if rcv := f.Received; rcv != nil && rcv.UDP != nil {
				fmt.Fprintf(&b, "[%3d] Server Report:\n", f.ID)
				b.WriteString(e.row(r, fmt.Sprintf("[%3d]", f.ID), rcv.Start, rcv.End, false, rcv.Bytes, rcv.Seconds(), 0, 0, nil, rcv.UDP))
			}
		}
	}
	e.sumRows(&b, r, sides, start, end)
	if r.Error != "" {
		fmt.Fprintf(&b, "wireperf: test ended early: %s\n", r.Error)
	}
	_, err := io.WriteString(e.W, b.String())
	return err
}

// netPower is iperf2's NetPwr: bytes per second over the RTT in
// seconds, times 1e-6, printed as iperf2 prints it.
func netPower(bitsPerSecond float64, rttUs uint32) string {
	if rttUs == 0 {
		return "NAN"
	}
	p := 1e-6 * (bitsPerSecond / 8) / (float64(rttUs) * 1e-6)
	switch {
	case p > 100:
		return fmt.Sprintf("%.0f", p)
	case p > 10:
		return fmt.Sprintf("%.2f", p)
	}
	return fmt.Sprintf("%f", p)
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(a) / float64(b)))
}
