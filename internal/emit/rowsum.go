package emit

import "github.com/wireperf/wireperf/internal/result"

// rowSum adds the flows of one direction in one interval row. Unlike
// result.IntervalRow.SumDirection it files flows of unknown direction
// with the client's, as the emitters show them, and notes whether any
// sender had TCP_INFO, since retransmits mean nothing without it.
type rowSum struct {
	sent, received, retransmits      int64
	hasSent, hasReceived, hasTCPInfo bool
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
			s.hasTCPInfo = s.hasTCPInfo || f.Sent.HasTCPInfo
		}
		if f.Received != nil {
			s.received += f.Received.Bytes
			s.hasReceived = true
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
