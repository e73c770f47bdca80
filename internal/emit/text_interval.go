package emit

import (
	"fmt"

	"github.com/wireperf/wireperf/internal/result"
)

// Interval writes one interval: a line per flow with the sender's figures
// on the left and the receiver's on the right, whichever end each is, and
// a [SUM] line per direction that has several flows. A side whose report
// is missing (time ran out) shows "-".
func (t *Text) Interval(r *result.Result, row result.IntervalRow) error {
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
			if udp {
				if u := udpOf(f.Received); u != nil && u.Provisional {
					t.provisional = true
				}
				body = append(body, udpIntervalFlowLine(t, row, f, bidir))
				if note := udpIntervalNote(row, f, bidir); note != "" {
					body = append(body, note)
				}
			} else {
				body = append(body, intervalFlowLine(t, row, f, bidir))
			}
			flows++
		}
		mainLines += flows
		if flows > 1 {
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
		if udp {
			l.add("%s", udpIntervalColumns(bidir))
		} else {
			l.add("%s", intervalColumns(bidir))
		}
		t.columnsDone = true
	}
	// Like iperf3: groups of several lines are set apart from each other.
	if mainLines > 1 && t.groups > 0 {
		l.add("%s", separator)
	}
	suffix := ""
	if row.Omitted {
		suffix = "  (omitted)"
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
	secs := row.End - row.Start
	sTransfer, sRate, retr, cwnd, rttText := missing, missing, missing, missing, missing
	if s := f.Sent; s != nil {
		sTransfer, sRate = amounts(s.Bytes, secs, t.Opt.Format)
		if s.HasTCPInfo {
			retr, cwnd, rttText = fmt.Sprint(s.Retransmits), window(s.CwndBytes), rtt(s.RTTus)
		}
	}
	rTransfer, rRate := missing, missing
	if f.Received != nil {
		rTransfer, rRate = amounts(f.Received.Bytes, secs, t.Opt.Format)
	}
	return fmt.Sprintf(intervalLayout, flowTag(f.ID, senderRoleOf(f.SenderRole), bidir), timeSpan(row.Start, row.End),
		sTransfer, sRate, retr, cwnd, rttText, rTransfer, rRate)
}

func intervalSumLine(t *Text, row result.IntervalRow, role string, bidir bool) string {
	secs := row.End - row.Start
	sum := sumRow(row, role)
	sTransfer, sRate, retr := missing, missing, missing
	if sum.hasSent {
		sTransfer, sRate = amounts(sum.sent, secs, t.Opt.Format)
	}
	if sum.hasTCPInfo {
		retr = fmt.Sprint(sum.retransmits)
	}
	rTransfer, rRate := missing, missing
	if sum.hasReceived {
		rTransfer, rRate = amounts(sum.received, secs, t.Opt.Format)
	}
	// A sum has no single window or RTT.
	return fmt.Sprintf(intervalLayout, sumTag(role, bidir), timeSpan(row.Start, row.End),
		sTransfer, sRate, retr, "", "", rTransfer, rRate)
}
