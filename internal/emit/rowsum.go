package emit

import "github.com/wireperf/wireperf/internal/result"

// rowSum adds the flows of one direction in one interval row. Unlike
// result.IntervalRow.SumDirection it files flows of unknown direction
// with the client's, as the emitters show them, and notes whether any
// sender had TCP_INFO, since retransmits mean nothing without it.
type rowSum struct {
	sent, received, retransmits, delivered         int64
	hasSent, hasReceived, hasTCPInfo, hasDelivered bool
	// sentSpan and receivedSpan are the spans of the ends that reported
	// each half: one end cuts all its streams at once.
	sentSpan, receivedSpan result.Span
}

func sumRow(row result.IntervalRow, senderRole string) rowSum {
	var s rowSum
	for _, f := range row.Flows {
		if senderRoleOf(f.SenderRole) != senderRole {
			continue
		}
		if f.Sent != nil {
			s.sent += f.Sent.Bytes
			s.retransmits += f.Sent.Retransmits
			s.hasSent = true
			s.sentSpan = f.SentSpan
			if f.Sent.HasDelivered {
				s.delivered += f.Sent.Delivered
				s.hasDelivered = true
			}
			s.hasTCPInfo = s.hasTCPInfo || f.Sent.HasTCPInfo
		}
		if f.Received != nil {
			s.received += f.Received.Bytes
			s.hasReceived = true
			s.receivedSpan = f.ReceivedSpan
		}
	}
	return s
}

// senderRoleOf files a flow of unknown direction with the client's.
func senderRoleOf(role string) string {
	if role == "" {
		return result.RoleClient
	}
	return role
}
