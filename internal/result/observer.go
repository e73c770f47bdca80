package result

// Observer sees a client's test as it runs, whichever protocol runs it
// (session's, or iperf3's). Both calls come from one goroutine, in order.
type Observer interface {
	// Started is called once every connection is up, with the streams'
	// addresses and socket options on both ends, before any data moves.
	Started(r *Result)
	// Interval is called for each interval once both ends' figures are
	// in, or when the remote end's are overdue. (An iperf3 server
	// reports only at the end: its rows carry the local end's figures.)
	Interval(r *Result, row IntervalRow)
}
