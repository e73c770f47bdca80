package emit

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/units"
)

// Interval writes one interval: a line per flow with the sender's figures
// on the left and the receiver's on the right, whichever end each is, and
// a [SUM] line per direction that has several flows. A side whose report
// is missing (time ran out) shows "-".
func (t *Text) Interval(r *result.Result, row result.IntervalRow) error {
	t.rowLength = r.Spec.Interval
	udp := isUDP(r.Spec)
	bidir := r.Spec.Bidir || len(rowRoles(row)) > 1
	var body []string
	mainLines := 0 // flow and [SUM] lines, without the notes under them
	for _, role := range rowRoles(row) {
		flows := 0
		for _, f := range row.Flows {
			if senderRoleOf(f.SenderRole) != role {
				continue
			}
			if t.OneEnd {
				if udp {
					body = append(body, udpOneEndFlowLine(t, r, row, f, bidir))
					if note := udpIntervalNote(row, f, bidir); note != "" && senderRoleOf(f.SenderRole) != r.Local.Role {
						body = append(body, note)
					}
					if note := framesIntervalNote(row, f, bidir); note != "" {
						body = append(body, note)
					}
				} else {
					body = append(body, oneEndFlowLine(t, r, row, f, bidir))
				}
				flows++
				continue
			}
			if udp {
				if u := udpOf(f.Received); u != nil && u.Provisional {
					t.provisional = true
				}
				body = append(body, udpIntervalFlowLine(t, row, f, bidir))
				if note := udpIntervalNote(row, f, bidir); note != "" {
					body = append(body, note)
				}
				if note := framesIntervalNote(row, f, bidir); note != "" {
					body = append(body, note)
				}
			} else {
				body = append(body, intervalFlowLine(t, row, f, bidir))
			}
			flows++
		}
		mainLines += flows
		if flows > 1 {
			if t.OneEnd {
				if udp {
					body = append(body, udpOneEndSumLine(t, r, row, role, bidir))
				} else {
					body = append(body, oneEndSumLine(t, r, row, role, bidir))
				}
				mainLines++
				continue
			}
			if udp {
				body = append(body, udpIntervalSumLine(t, row, role, bidir))
			} else {
				body = append(body, intervalSumLine(t, row, role, bidir))
			}
			mainLines++
		}
	}
	l := t.newLines(r.Spec)
	if !t.columnsDone {
		switch {
		case udp && t.OneEnd:
			l.add("%s", udpOneEndColumns(r, row, bidir))
		case udp:
			l.add("%s", udpIntervalColumns(bidir))
		case t.OneEnd:
			l.add("%s", oneEndColumns(bidir))
		default:
			l.add("%s", intervalColumns(bidir))
		}
		t.columnsDone = true
	}
	// Like iperf3: groups of several lines are set apart from each other.
	if mainLines > 1 && t.groups > 0 {
		l.add("%s", separator)
	}
	suffix := ""
	switch {
	case row.Omitted:
		suffix = "  (omitted)"
	case allTails(row):
		suffix = "  (tail)"
	}
	for _, line := range body {
		l.add("%s%s", line, suffix)
	}
	t.groups++
	return l.writeTo(t.W)
}

// rowRoles lists the sending roles present in a row, client first.
func rowRoles(row result.IntervalRow) []string {
	var roles []string
	for _, role := range []string{result.RoleClient, result.RoleServer} {
		for _, f := range row.Flows {
			if senderRoleOf(f.SenderRole) == role {
				roles = append(roles, role)
				break
			}
		}
	}
	return roles
}

func intervalFlowLine(t *Text, row result.IntervalRow, f result.FlowInterval, bidir bool) string {
	sTransfer, sRate, retr, cwnd, rttText := missing, missing, missing, missing, missing
	if s := f.Sent; s != nil {
		sTransfer, sRate = t.spanAmounts(s.Bytes, f.SentSpan)
		if s.HasTCPInfo {
			retr, cwnd, rttText = fmt.Sprint(s.Retransmits), window(s.CwndBytes), rtt(s.RTTus)
		}
	}
	rTransfer, rRate := missing, missing
	if f.Received != nil {
		rTransfer, rRate = t.spanAmounts(f.Received.Bytes, f.ReceivedSpan)
	}
	line := fmt.Sprintf(intervalLayout, flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End),
		sTransfer, sRate, retr, cwnd, rttText, rTransfer, rRate)
	return line + otherSpans(row, f.SenderRole, f.Sent != nil, f.SentSpan, f.Received != nil, f.ReceivedSpan) +
		backlogNote(f.Received)
}

func intervalSumLine(t *Text, row result.IntervalRow, role string, bidir bool) string {
	sum := sumRow(row, role)
	sTransfer, sRate, retr := missing, missing, missing
	if sum.hasSent {
		sTransfer, sRate = t.spanAmounts(sum.sent, sum.sentSpan)
	}
	if sum.hasTCPInfo {
		retr = fmt.Sprint(sum.retransmits)
	}
	rTransfer, rRate := missing, missing
	if sum.hasReceived {
		rTransfer, rRate = t.spanAmounts(sum.received, sum.receivedSpan)
	}
	// A sum has no single window or RTT.
	line := fmt.Sprintf(intervalLayout, sumTag(role, bidir), timeSpan(row.Start, row.End),
		sTransfer, sRate, retr, "", "", rTransfer, rRate)
	return line + otherSpans(row, role, sum.hasSent, sum.sentSpan, sum.hasReceived, sum.receivedSpan)
}

// otherSpans names the span of a half whose end's row covers other time
// than the row's label (the local end's): the two ends' clocks start
// apart, and each end's last row is its own tail. Each half's rate is
// over its own span, never the other end's. A half that is its end's
// tail says so, unless the whole row is tails.
func otherSpans(row result.IntervalRow, senderRole string, hasSent bool, sent result.Span, hasReceived bool, received result.Span) string {
	label := result.Span{Start: row.Start, End: row.End}
	tails := allTails(row)
	var out string
	note := func(who string, s result.Span) {
		differs := s.Differs(label)
		tail := s.Tail && !tails
		switch {
		case differs && tail:
			out += fmt.Sprintf("  (%s tail %.2f-%.2f)", who, s.Start, s.End)
		case differs:
			out += fmt.Sprintf("  (%s %.2f-%.2f)", who, s.Start, s.End)
		case tail:
			out += fmt.Sprintf("  (%s tail)", who)
		}
	}
	sender := senderRoleOf(senderRole)
	if hasSent {
		note(roleName(sender), sent)
	}
	if hasReceived {
		note(roleName(otherRole(sender)), received)
	}
	return out
}

// allTails reports whether every half of the row is its end's tail.
func allTails(row result.IntervalRow) bool {
	any := false
	for _, f := range row.Flows {
		if f.Sent != nil {
			if !f.SentSpan.Tail {
				return false
			}
			any = true
		}
		if f.Received != nil {
			if !f.ReceivedSpan.Tail {
				return false
			}
			any = true
		}
	}
	return any
}

// backlogNote says how much a receiver's socket held unread at the cut,
// when its reads fell behind what the kernel took in by more than a
// quarter of the row: the row counts what the network delivered, and the
// reader caught up later.
func backlogNote(si *result.StreamInterval) string {
	if si == nil || !si.KernelCounted {
		return ""
	}
	var out string
	if si.OutOfOrder > 0 {
		// The bytes behind a loss's hole are counted in the row they
		// arrived in, not when the retransmission put them in order.
		out += fmt.Sprintf("  (%d segments arrived out of order)", si.OutOfOrder)
	}
	if si.Backlog > 0 && si.Backlog*4 >= si.Bytes {
		out += fmt.Sprintf("  (reader behind: %s unread)", units.FormatTransfer(float64(si.Backlog), units.AdaptiveBytes))
	}
	return out
}

// oneEndFlowLine is a flow's row from the end whose record r is alone:
// what it sent, with its TCP figures, or what it received.
func oneEndFlowLine(t *Text, r *result.Result, row result.IntervalRow, f result.FlowInterval, bidir bool) string {
	transfer, rate, retr, cwnd, rttText, note := missing, missing, "", "", "", ""
	if senderRoleOf(f.SenderRole) == r.Local.Role {
		retr, cwnd, rttText = missing, missing, missing
		if s := f.Sent; s != nil {
			transfer, rate = t.spanAmounts(s.Bytes, f.SentSpan)
			if s.HasTCPInfo {
				retr, cwnd, rttText = fmt.Sprint(s.Retransmits), window(s.CwndBytes), rtt(s.RTTus)
			}
		}
	} else {
		// A receiver's row has no TCP figures; its notes follow its rate.
		if f.Received != nil {
			transfer, rate = t.spanAmounts(f.Received.Bytes, f.ReceivedSpan)
			note = backlogNote(f.Received)
		}
		return fmt.Sprintf(oneEndReceiverLayout, flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End),
			transfer, rate) + note
	}
	return fmt.Sprintf(oneEndLayout, flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End),
		transfer, rate, retr, cwnd, rttText)
}

func oneEndSumLine(t *Text, r *result.Result, row result.IntervalRow, role string, bidir bool) string {
	sum := sumRow(row, role)
	transfer, rate, retr := missing, missing, ""
	if role == r.Local.Role {
		retr = missing
		if sum.hasSent {
			transfer, rate = t.spanAmounts(sum.sent, sum.sentSpan)
		}
		if sum.hasTCPInfo {
			retr = fmt.Sprint(sum.retransmits)
		}
	} else if sum.hasReceived {
		transfer, rate = t.spanAmounts(sum.received, sum.receivedSpan)
	}
	return fmt.Sprintf(oneEndLayout, sumTag(role, bidir), timeSpan(row.Start, row.End), transfer, rate, retr, "", "")
}

// spanAmounts is amounts over a row half's span, with no rate for a tail
// shorter than a tenth of the rows' length: its bytes are what a queue
// let go at the end (1.38 Gbit/s over 60 ms on a 1 Gbit/s path), not a
// rate the path carried. The bytes still count; the totals have the rate.
func (t *Text) spanAmounts(bytes int64, span result.Span) (transfer, rate string) {
	transfer, rate = amounts(bytes, span.Seconds(), t.Opt.Format)
	if span.ShortTail(t.rowLength) && bytes > 0 {
		rate = fmt.Sprintf("%*s", len(rate), missing)
	}
	return transfer, rate
}
