package iperf3

import "encoding/json"

// Results is one end's report in EXCHANGE_RESULTS, with the keys iperf3
// 3.12 writes and reads (later versions add omitted_errors and
// omitted_packets; 3.12 ignores keys it does not know).
type Results struct {
	CPUTotal             Float           `json:"cpu_util_total"`
	CPUUser              Float           `json:"cpu_util_user"`
	CPUSystem            Float           `json:"cpu_util_system"`
	SenderHasRetransmits Int             `json:"sender_has_retransmits"` // 1, 0, or -1 when this end sent nothing
	CongestionUsed       string          `json:"congestion_used,omitempty"`
	Streams              []StreamResults `json:"streams"`
	ServerOutputJSON     json.RawMessage `json:"server_output_json,omitempty"`
	ServerOutputText     string          `json:"server_output_text,omitempty"`
}

// StreamResults is one stream in Results. Retransmits is -1 on a
// receiving stream; Jitter is in seconds; for UDP, Packets is the count
// sent (sender) or the highest sequence number seen (receiver), Errors the
// receiver's lost datagrams. Both include the omitted start; the
// omitted_* figures say how much of them it was.
type StreamResults struct {
	ID             Int   `json:"id"`
	Bytes          Int   `json:"bytes"`
	Retransmits    Int   `json:"retransmits"`
	Jitter         Float `json:"jitter"`
	Errors         Int   `json:"errors"`
	OmittedErrors  Int   `json:"omitted_errors"`
	Packets        Int   `json:"packets"`
	OmittedPackets Int   `json:"omitted_packets"`
	StartTime      Float `json:"start_time"`
	EndTime        Float `json:"end_time"`
}

// present checks the keys iperf3 itself requires in a results message.
func (r *Results) present(raw []byte) bool {
	var probe struct {
		Total   *json.RawMessage   `json:"cpu_util_total"`
		User    *json.RawMessage   `json:"cpu_util_user"`
		System  *json.RawMessage   `json:"cpu_util_system"`
		HasRetr *json.RawMessage   `json:"sender_has_retransmits"`
		Streams *[]json.RawMessage `json:"streams"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return false
	}
	return probe.Total != nil && probe.User != nil && probe.System != nil && probe.HasRetr != nil && probe.Streams != nil
}

// wireStreamID is iperf3's number for the n-th stream a test opens
// (n from 1): 1, 3, 4, 5, … — iperf3 3.12 skips 2, and both of its ends
// number streams so, which is how results find their stream.
func wireStreamID(n int) int {
	if n <= 1 {
		return 1
	}
	return n + 1
}

// localStreamID inverts wireStreamID; 0 for an ID iperf3 never uses.
func localStreamID(wire int) int {
	switch {
	case wire == 1:
		return 1
	case wire >= 3:
		return wire - 1
	}
	return 0
}
