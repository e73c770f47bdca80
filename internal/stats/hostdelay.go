package stats

import "time"

// A host's own share of a measured time (its scheduling, a descheduled
// thread) is the host's, not the path's, once it exceeds the smallest
// network time seen, clamped to [HostDelayedMin, HostDelayedMax]: on a
// loopback path 100 µs of scheduling is several RTTs; on any path a
// millisecond is a descheduled thread, not the kernel's usual wake-up.
// rr and tcp-connect flag a host with this one rule.
const (
	HostDelayedMin = 100 * time.Microsecond
	HostDelayedMax = time.Millisecond
)

// HostDelayed is the threshold over which a host's share is flagged, given
// the smallest network time seen so far (negative: none yet).
func HostDelayed(minNetwork time.Duration) time.Duration {
	if minNetwork < 0 {
		return HostDelayedMax
	}
	return min(max(minNetwork, HostDelayedMin), HostDelayedMax)
}
