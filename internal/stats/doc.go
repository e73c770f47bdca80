// Package stats turns what a receiver sees into the figures of
// docs/metrics.md: per-datagram UDP accounting (loss with a late threshold,
// duplicates, RFC 4737 re-ordering, RFC 3550 jitter, RFC 5481 IPDV and PDV,
// one-way delay), the NTP-style clock offset estimate of the control
// channel, and latency summaries.
//
// Nothing here is safe for concurrent use: each stream's receiver owns its
// UDPReceiver, and whoever reports an interval calls Cut from that same
// goroutine (or under the caller's own lock).
package stats
