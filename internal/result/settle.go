package result

// SettledIntervals are the end's intervals with its UDP receivers' row
// settlements applied (Stream.UDPSettlements): the rows as they read once every
// late threshold has passed, which add up to the stream totals. Rows are
// copied where they change; e.Intervals is left as it was.
func (e End) SettledIntervals() []Interval {
	type key struct{ id, index int }
	fix := map[key]UDPSettlement{}
	final := map[int]bool{} // receiving streams whose totals are in
	for _, st := range e.Streams {
		if st.UDP == nil || st.Sender {
			continue
		}
		final[st.ID] = true
		for _, s := range st.UDPSettlements {
			fix[key{st.ID, s.Index}] = s
		}
	}
	if len(final) == 0 {
		return e.Intervals
	}
	out := make([]Interval, len(e.Intervals))
	for i, iv := range e.Intervals {
		out[i] = iv
		copied := false
		for j, si := range iv.Streams {
			if si.UDP == nil || si.Sender || !final[si.ID] {
				continue
			}
			s, ok := fix[key{si.ID, iv.Index}]
			if !ok && !si.UDP.Provisional {
				continue
			}
			if !copied {
				out[i].Streams = append([]StreamInterval(nil), iv.Streams...)
				copied = true
			}
			u := *si.UDP
			u.Received += s.Received
			u.Lost += s.Lost
			u.Late += s.Late
			u.Duplicates += s.Duplicates
			u.Reordered += s.Reordered
			u.Expected = u.Received + u.Lost
			u.Provisional = false
			out[i].Streams[j].UDP = &u
		}
	}
	return out
}
