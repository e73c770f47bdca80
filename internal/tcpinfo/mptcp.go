package tcpinfo

import "errors"

// ErrNotMPTCP is what GetMPTCP returns for a socket that is plain TCP:
// opened without MPTCP, or on a host whose kernel gave a TCP socket when
// MPTCP was asked for.
var ErrNotMPTCP = errors.New("not an MPTCP socket")

// MPTCP is what the kernel reports of one MPTCP connection (RFC 8684):
// the connection's own figures (MPTCP_INFO) and each of its subflows'
// TCP_INFO and addresses (MPTCP_TCPINFO, MPTCP_SUBFLOW_ADDRS). Fields a
// kernel too old to report stay zero: the connection-level byte counts
// and retransmits came with Linux 6.9, the subflows' lists with 5.16.
type MPTCP struct {
	// Fallback says the connection runs as plain TCP although its socket
	// is MPTCP's: the peer, or a middlebox stripping the option, refused
	// MPTCP at the handshake. Nothing below is then reported.
	Fallback bool `json:"fallback"`
	// SubflowCount is the number of subflows the connection has, the
	// initial one included, as the kernel counted them when asked; it can
	// exceed len(Subflows) when the kernel gave fewer than it counts.
	SubflowCount int `json:"subflow_count"`
	// SubflowsMax is the path manager's limit on additional subflows
	// (`ip mptcp limits`), AddAddrSignal and AddAddrAccepted the
	// addresses this end announced and the peer's it accepted.
	SubflowsMax     int  `json:"subflows_max"`
	AddAddrSignal   int  `json:"add_addr_signal"`
	AddAddrAccepted int  `json:"add_addr_accepted"`
	ChecksumEnabled bool `json:"csum_enabled"`
	// Connection-level counts over all subflows (Linux 6.9 on): data
	// bytes sent (retransmissions included), received, acknowledged at
	// the MPTCP level and retransmitted, and the retransmissions.
	BytesSent     uint64 `json:"bytes_sent"`
	BytesReceived uint64 `json:"bytes_received"`
	BytesAcked    uint64 `json:"bytes_acked"`
	BytesRetrans  uint64 `json:"bytes_retrans"`
	Retransmits   uint32 `json:"retransmits"`
	// Subflows are the subflows in the kernel's order, the initial one
	// first.
	Subflows []Subflow `json:"subflows,omitempty"`
	// SubflowsEarly says the subflows had closed (the peer ended the
	// connection) before the end's last reading, which then found them
	// empty: Subflows are as last read while they ran, before the
	// stream's end, and may hold less than it moved. The connection's
	// own counts above are the end's.
	SubflowsEarly bool `json:"subflows_early,omitempty"`
}

// Subflow is one TCP subflow of an MPTCP connection: its addresses
// ("ip:port", empty where the kernel gave none) and its TCP_INFO.
type Subflow struct {
	Local  string `json:"local,omitempty"`
	Remote string `json:"remote,omitempty"`
	Info   Info   `json:"tcp_info"`
}

// SubflowRetransmits is the sum of the subflows' retransmitted segments.
func (m *MPTCP) SubflowRetransmits() int64 {
	var n int64
	for _, s := range m.Subflows {
		n += int64(s.Info.TotalRetrans)
	}
	return n
}
