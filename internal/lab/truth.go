package lab

import (
	"fmt"
	"math"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

// The truth checks hold a test's printed figures to what the lab's path
// can carry (docs/truth.md): every row, every total. Each returns one line
// per failure; none means the figures are possible.

// RowTolerance is how far above the path's capacity a row may read: the
// cut's timing (a few ms of a second) and the kernel's jiffies.
const RowTolerance = 0.02

// RowLimit is the highest rate a row of secs seconds may read on a path
// of capacity bit/s: the cut's timing error is a matter of milliseconds,
// whatever the row's length, so a row shorter than a second (a test's
// tail) gets RowTolerance of a second's bytes over its own, not 2% of
// them: a 0.11 s tail read 292.8 Mbit/s on a 286.9 Mbit/s link, 4 ms of
// the link's bytes early.
func RowLimit(capacity, secs float64) float64 {
	return capacity * (1 + RowTolerance/math.Min(secs, 1))
}

// minRowSeconds is the shortest row whose rate is judged: a tail of a few
// milliseconds has a rate, but the cut's timing dominates it.
const minRowSeconds = 0.1

// CheckRows finds receiver rows that read above capacity (bit/s of
// goodput per direction, by sender role) by more than RowTolerance: each
// direction's receivers' bytes over their own span.
func CheckRows(res *result.Result, capacity map[string]float64) []string {
	var out []string
	for _, row := range res.IntervalRows() {
		for _, role := range []string{result.RoleClient, result.RoleServer} {
			limit, ok := capacity[role]
			if !ok {
				continue
			}
			s := row.SumDirection(role)
			secs := s.ReceivedSpan.Seconds()
			if !s.HasReceived || secs < minRowSeconds {
				continue
			}
			if r := result.Rate(s.ReceivedBytes, secs); r > RowLimit(limit, secs) {
				out = append(out, fmt.Sprintf("row %d (%.2f-%.2f s, %s sends): %.1f Mbit/s, above the path's %.1f",
					row.Index, s.ReceivedSpan.Start, s.ReceivedSpan.End, role, r/1e6, limit/1e6))
			}
		}
	}
	return out
}

// CheckAddsUp finds streams whose rows (the tail among them, the omitted
// start left out) do not add up to their totals, on either end.
func CheckAddsUp(res *result.Result) []string {
	var out []string
	for _, e := range []*result.End{&res.Local, &res.Remote} {
		rows := map[int]int64{}
		for _, iv := range e.SettledIntervals() {
			if iv.Omitted {
				continue
			}
			for _, si := range iv.Streams {
				if si.UDP != nil && !si.Sender {
					rows[si.ID] += si.UDP.Received * int64(res.Spec.Length)
					continue
				}
				rows[si.ID] += si.Bytes
			}
		}
		for _, st := range e.Streams {
			want := st.Bytes
			if st.UDP != nil && !st.Sender {
				want = st.UDP.Received * int64(res.Spec.Length)
			}
			if rows[st.ID] != want {
				out = append(out, fmt.Sprintf("%s stream %d: rows add up to %d bytes, its total is %d", e.Role, st.ID, rows[st.ID], want))
			}
		}
	}
	return out
}

// Arithmetic is what a direction's receiver total should read when one
// stream fills the path: the framing arithmetic's goodput, less the share
// of the test in which the lab's router stood idle while packets were due
// (RouterIdle). On a busy 2-core host the router is descheduled now and
// then; a late data packet leaves the line idle, and a late ACK stalls the
// sender once the queue has drained, so the path carried that much less
// than its rate, by the router's own count. Idle time read over the whole
// test rather than the measured span only allows more.
type Arithmetic struct {
	Rate       float64       // bit/s of goodput
	RouterIdle time.Duration // the router's lost output time, both directions, over the measured span or the test
}

// RouterIdle is the router's lost output time (OutputLostUs) between two
// readings of its counters, over both directions.
func RouterIdle(before, after RouterStats) time.Duration {
	us := after.AtoB.OutputLostUs + after.BtoA.OutputLostUs - before.AtoB.OutputLostUs - before.BtoA.OutputLostUs
	return time.Duration(us) * time.Microsecond
}

// CheckTotal compares each direction's receiver total with its rows:
// their bytes over their spans, tail included, each span clipped to the
// total's (from the first byte: a receiver's first row holds the round
// trip before it), within 1%; and, for a test with an omitted start and
// at least 8 full rows, the mean of its full rows, within 1% (without
// -O, slow start's rows and the tail weigh too much for a mean). Where
// want is given (by sender role, for a test whose omitted start took slow
// start away on a path the stream fills), the total is held to its
// Arithmetic: at most 1% above the rate, and at most 1% below the rate
// less the router's idle share.
func CheckTotal(res *result.Result, want map[string]Arithmetic) []string {
	var out []string
	for _, d := range res.Directions() {
		total := d.Received.BitsPerSecond()
		var sum, spanBytes, spanSecs float64
		var n int
		for _, row := range res.IntervalRows() {
			if row.Omitted {
				continue
			}
			s := row.SumDirection(d.SenderRole)
			if !s.HasReceived {
				continue
			}
			secs := s.ReceivedSpan.Seconds()
			clipped := min(s.ReceivedSpan.End, d.Received.End) - max(s.ReceivedSpan.Start, d.Received.Start)
			spanBytes += float64(s.ReceivedBytes)
			spanSecs += max(clipped, 0)
			if !s.ReceivedSpan.Tail && secs > 0.9 {
				sum += result.Rate(s.ReceivedBytes, secs)
				n++
			}
		}
		if spanSecs > 0 {
			if rows := spanBytes * 8 / spanSecs; math.Abs(total-rows) > 0.01*rows {
				out = append(out, fmt.Sprintf("%s: receiver total %.1f Mbit/s, its rows %.1f over their spans", d.Label(), total/1e6, rows/1e6))
			}
		}
		if n >= 8 && res.Spec.Omit > 0 {
			if mean := sum / float64(n); math.Abs(total-mean) > 0.01*mean {
				out = append(out, fmt.Sprintf("%s: receiver total %.1f Mbit/s, its full rows' mean %.1f", d.Label(), total/1e6, mean/1e6))
			}
		}
		if w, ok := want[d.SenderRole]; ok {
			out = append(out, checkArithmetic(d.Label(), total, d.Received.Seconds, w)...)
		}
	}
	return out
}

// checkArithmetic holds one direction's receiver total (bit/s over secs)
// to its Arithmetic.
func checkArithmetic(label string, total, secs float64, w Arithmetic) []string {
	return checkRate(label, "the arithmetic", total, secs, w.Rate, w.RouterIdle)
}

// checkRate holds a receiver total (bit/s over secs) to a reference rate,
// named what in the failure: at most 1% above it, and at most 1% below it
// less the share of secs the router stood idle (see Arithmetic).
func checkRate(label, what string, total, secs, ref float64, routerIdle time.Duration) []string {
	if total > 1.01*ref {
		return []string{fmt.Sprintf("%s: receiver total %.1f Mbit/s, above %s %.1f", label, total/1e6, what, ref/1e6)}
	}
	floor, why := ref, ""
	if routerIdle > 0 && secs > 0 {
		share := min(routerIdle.Seconds()/secs, 1)
		floor *= 1 - share
		why = fmt.Sprintf(" less the router's %.1f ms idle (%.1f%%): %.1f", float64(routerIdle)/1e6, 100*share, floor/1e6)
	}
	if total < 0.99*floor {
		return []string{fmt.Sprintf("%s: receiver total %.1f Mbit/s, %s %.1f%s", label, total/1e6, what, ref/1e6, why)}
	}
	return nil
}

// CheckUDPLoss compares the datagrams a UDP test counted lost in a
// direction with the places that count their drops: the lab's router in
// it (routerDrops, by sender role) and the receiving sockets' own drops
// (result.UDP.SocketDrops). The loss is theirs, no more and no less:
// lost = router + sockets, exactly, where the sockets count datagrams.
// Where a socket took GRO batches it counts a dropped batch once, so
// its count is a lower bound and lost may exceed router + sockets, never
// fall below. A busy receiver drops datagrams of its own; the check puts
// them where the kernel counted them rather than calling the test wrong.
func CheckUDPLoss(res *result.Result, routerDrops map[string]int64) []string {
	var out []string
	for _, d := range res.Directions() {
		var lost, sockets int64
		batches := false
		for _, f := range d.Flows {
			if f.Received == nil || f.Received.UDP == nil {
				continue
			}
			u := f.Received.UDP
			lost += u.Lost
			if u.SocketDrops != nil {
				sockets += int64(*u.SocketDrops)
				batches = batches || u.SocketDropsGRO
			}
		}
		drops, ok := routerDrops[d.SenderRole]
		if !ok {
			continue
		}
		switch explained := drops + sockets; {
		case batches && lost >= explained, !batches && lost == explained:
		default:
			sock := fmt.Sprintf("%d", sockets)
			if batches {
				sock += " GRO batches (each at least one datagram)"
			}
			out = append(out, fmt.Sprintf("%s: %d datagrams counted lost, the router dropped %d and the receiving socket %s",
				d.Label(), lost, drops, sock))
		}
	}
	return out
}

// CheckNoFalseWarnings finds warnings that a clean path must not give:
// datagrams counted as another's.
func CheckNoFalseWarnings(res *result.Result) []string {
	var out []string
	for _, d := range res.Directions() {
		for _, f := range d.Flows {
			if u := f.Received; u != nil && u.UDP != nil && u.UDP.Invalid > 0 {
				out = append(out, fmt.Sprintf("%s stream %d: %d datagrams counted as not the sender's", d.Label(), f.ID, u.UDP.Invalid))
			}
		}
	}
	return out
}
