package flowrun

// Delivered is what a flow has moved over the network so far: a TCP
// sender's writes less what its socket still holds unacknowledged, any
// other flow's Bytes. A sender's writes fill its socket's buffer at once,
// megabytes before the network carries them (all the more when the
// kernel paces it to -b); the server's caps on rates and bytes count
// Delivered, so a paced test is judged by its rate on the wire.
func Delivered(f Flow) int64 {
	if t, ok := f.(*TCPFlow); ok && t.Sender() {
		if n, err := t.s.Unacked(); err == nil {
			return max(t.Bytes()-int64(n), 0)
		}
	}
	return f.Bytes()
}
