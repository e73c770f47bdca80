package result

import (
	"sort"
	"time"

	"github.com/wireperf/wireperf/internal/spec"
)

// Flow pairs the sender's and the receiver's view of one stream. Either
// side may be nil when that end's report is missing (a failed test).
type Flow struct {
	ID         int
	SenderRole string // RoleClient or RoleServer
	Sent       *Stream
	Received   *Stream
}

// Sum adds up streams of one direction.
type Sum struct {
	Start       float64 `json:"start"`
	End         float64 `json:"end"`
	Seconds     float64 `json:"seconds"`
	Bytes       int64   `json:"bytes"`
	Retransmits int64   `json:"retransmits"`
	Streams     int     `json:"streams"`
	// Drain is the longest receiver drain after the sender stopped
	// (Stream.Drain), in seconds.
	Drain float64 `json:"drain,omitempty"`
}

// BitsPerSecond is the sum's rate over its span.
func (s Sum) BitsPerSecond() float64 { return Rate(s.Bytes, s.Seconds) }

// Direction is every flow whose sender has the same role.
type Direction struct {
	SenderRole string
	Flows      []Flow
	Sent       Sum
	Received   Sum
}

// Label names the direction as the user sees it.
func (d Direction) Label() string {
	if d.SenderRole == RoleServer {
		return "server→client"
	}
	return "client→server"
}

// Flows pairs the two ends' streams by ID, in ID order.
func (r *Result) Flows() []Flow {
	byID := map[int]*Flow{}
	add := func(e *End) {
		for i := range e.Streams {
			s := &e.Streams[i]
			f := byID[s.ID]
			if f == nil {
				f = &Flow{ID: s.ID}
				byID[s.ID] = f
			}
			if s.Sender {
				f.Sent = s
				f.SenderRole = e.Role
			} else {
				f.Received = s
				if f.SenderRole == "" {
					f.SenderRole = otherRole(e.Role)
				}
			}
		}
	}
	add(&r.Local)
	add(&r.Remote)
	flows := make([]Flow, 0, len(byID))
	for _, f := range byID {
		flows = append(flows, *f)
	}
	sort.Slice(flows, func(i, j int) bool { return flows[i].ID < flows[j].ID })
	return flows
}

// Directions groups flows by sender: one direction normally, two with
// --bidir (client→server first).
func (r *Result) Directions() []Direction {
	var out []Direction
	for _, role := range []string{RoleClient, RoleServer} {
		d := Direction{SenderRole: role}
		var sent, recv []*Stream
		for _, f := range r.Flows() {
			if f.SenderRole != role {
				continue
			}
			d.Flows = append(d.Flows, f)
			if f.Sent != nil {
				sent = append(sent, f.Sent)
			}
			if f.Received != nil {
				recv = append(recv, f.Received)
			}
		}
		if len(d.Flows) == 0 {
			continue
		}
		d.Sent = SumStreams(sent)
		d.Received = SumStreams(recv)
		out = append(out, d)
	}
	return out
}

// SumStreams adds streams: bytes and retransmits add up, the span runs
// from the earliest start to the latest end.
func SumStreams(streams []*Stream) Sum {
	var s Sum
	for i, st := range streams {
		if i == 0 || st.Start < s.Start {
			s.Start = st.Start
		}
		if st.End > s.End {
			s.End = st.End
		}
		s.Bytes += st.Bytes
		s.Drain = max(s.Drain, st.Drain)
		s.Retransmits += st.Retransmits
		s.Streams++
	}
	s.Seconds = s.End - s.Start
	return s
}

// FlowInterval is one stream in one interval, from both ends. Each half
// has the span of the end that reported it: the two ends' clocks start
// apart (a receiver's a one-way delay after its sender's), and an end's
// last row is its own tail, so the k-th rows of the two ends need not
// cover the same time. Each half's rate is its bytes over its own span.
type FlowInterval struct {
	ID           int
	SenderRole   string
	Sent         *StreamInterval
	Received     *StreamInterval
	SentSpan     Span
	ReceivedSpan Span
}

// Span is the time one end's row covers, in seconds since that end's
// start; Tail marks the end's last row, after its last full interval.
type Span struct {
	Start, End float64
	Tail       bool
}

// Seconds is the span's length.
func (s Span) Seconds() float64 { return s.End - s.Start }

// ShortTail reports whether the span is a tail shorter than a tenth of the
// rows' length (interval): its bytes are what a queue (a socket buffer, a
// reassembly queue after a loss) let go at the end, and a rate over it is
// not one the path carried.
func (s Span) ShortTail(interval time.Duration) bool {
	return s.Tail && interval > 0 && s.Seconds() < interval.Seconds()/10
}

// ShortTail reports whether the row is its end's tail and shorter than a
// tenth of interval.
func (row IntervalRow) ShortTail(interval time.Duration) bool {
	return Span{Start: row.Start, End: row.End, Tail: row.Tail}.ShortTail(interval)
}

// Join is the row and the row after it as one: counts add up, figures
// sampled at a row's end are next's, each half's span runs from row's
// start to next's end. Neither row is changed.
func (row IntervalRow) Join(next IntervalRow) IntervalRow {
	out := row
	out.End, out.Tail = next.End, next.Tail
	out.Omitted = row.Omitted && next.Omitted
	out.Flows = append([]FlowInterval(nil), row.Flows...)
	for _, n := range next.Flows {
		f := out.flow(n.ID, n.SenderRole)
		f.Sent, f.SentSpan = joinHalf(f.Sent, n.Sent, f.SentSpan, n.SentSpan)
		f.Received, f.ReceivedSpan = joinHalf(f.Received, n.Received, f.ReceivedSpan, n.ReceivedSpan)
	}
	return out
}

func joinHalf(a, b *StreamInterval, as, bs Span) (*StreamInterval, Span) {
	switch {
	case b == nil:
		return a, as
	case a == nil:
		return b, bs
	}
	joined := JoinStreamIntervals([]StreamInterval{*a}, []StreamInterval{*b})
	return &joined[0], Span{Start: as.Start, End: bs.End, Tail: bs.Tail}
}

// Differs reports whether two spans differ by more than the text's
// hundredths of a second at either end.
func (s Span) Differs(o Span) bool {
	const eps = 0.005
	return s.Start-o.Start > eps || o.Start-s.Start > eps || s.End-o.End > eps || o.End-s.End > eps
}

// IntervalRow is one reporting interval with both ends' figures. Its
// times are the local end's; the remote end's interval of the same index
// covers the same span of its own clock.
type IntervalRow struct {
	Index   int
	Start   float64
	End     float64
	Omitted bool
	// Tail is set when the row is the tail of the end whose times it
	// shows.
	Tail  bool
	Flows []FlowInterval
}

// SenderRoles maps each stream ID to the role of its sender.
func (r *Result) SenderRoles() map[int]string {
	roles := map[int]string{}
	for _, f := range r.Flows() {
		roles[f.ID] = f.SenderRole
	}
	return roles
}

// IntervalRows joins the two ends' intervals by index, as they settled
// (End.SettledIntervals). An interval that only one end reported still
// gets a row, with the other side nil.
func (r *Result) IntervalRows() []IntervalRow {
	type pair struct{ local, remote *Interval }
	byIndex := map[int]*pair{}
	get := func(i int) *pair {
		if byIndex[i] == nil {
			byIndex[i] = &pair{}
		}
		return byIndex[i]
	}
	local, remote := r.Local.SettledIntervals(), r.Remote.SettledIntervals()
	for i := range local {
		get(local[i].Index).local = &local[i]
	}
	for i := range remote {
		get(remote[i].Index).remote = &remote[i]
	}
	roles := r.SenderRoles()
	out := make([]IntervalRow, 0, len(byIndex))
	for _, p := range byIndex {
		out = append(out, JoinInterval(p.local, p.remote, roles))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// JoinInterval makes one row from the local and remote views of the same
// interval; either may be nil. The row's times are the local end's when it
// has them. roles maps stream IDs to their sender's role.
func JoinInterval(local, remote *Interval, roles map[int]string) IntervalRow {
	var row IntervalRow
	for _, iv := range []*Interval{remote, local} { // local last: its times win
		if iv == nil {
			continue
		}
		row.Index, row.Start, row.End, row.Omitted, row.Tail = iv.Index, iv.Start, iv.End, iv.Omitted, iv.Tail
		span := Span{Start: iv.Start, End: iv.End, Tail: iv.Tail}
		for j := range iv.Streams {
			si := &iv.Streams[j]
			fi := row.flow(si.ID, roles[si.ID])
			if si.Sender {
				fi.Sent, fi.SentSpan = si, span
			} else {
				fi.Received, fi.ReceivedSpan = si, span
			}
		}
	}
	sort.Slice(row.Flows, func(i, j int) bool { return row.Flows[i].ID < row.Flows[j].ID })
	return row
}

func (row *IntervalRow) flow(id int, senderRole string) *FlowInterval {
	for i := range row.Flows {
		if row.Flows[i].ID == id {
			return &row.Flows[i]
		}
	}
	row.Flows = append(row.Flows, FlowInterval{ID: id, SenderRole: senderRole})
	return &row.Flows[len(row.Flows)-1]
}

// IntervalSum adds the flows of one direction in one interval row.
type IntervalSum struct {
	SentBytes     int64
	ReceivedBytes int64
	Retransmits   int64
	HasSent       bool
	HasReceived   bool
	// SentSpan and ReceivedSpan are the spans of the ends that reported
	// each side: a side's rate is over its own span.
	SentSpan, ReceivedSpan Span
}

// SumDirection adds the flows of row whose sender has the given role.
func (row IntervalRow) SumDirection(senderRole string) IntervalSum {
	var s IntervalSum
	for _, f := range row.Flows {
		if f.SenderRole != senderRole {
			continue
		}
		if f.Sent != nil {
			s.SentBytes += f.Sent.Bytes
			s.Retransmits += f.Sent.Retransmits
			s.HasSent, s.SentSpan = true, f.SentSpan
		}
		if f.Received != nil {
			s.ReceivedBytes += f.Received.Bytes
			s.HasReceived, s.ReceivedSpan = true, f.ReceivedSpan
		}
	}
	return s
}

func otherRole(role string) string {
	if role == RoleClient {
		return RoleServer
	}
	return RoleClient
}

// SenderRolesOf maps every stream of a spec to its sender's role.
func SenderRolesOf(s spec.Spec) map[int]string {
	roles := map[int]string{}
	for id := 1; id <= s.DataConns(); id++ {
		if s.ClientSendsOn(id) {
			roles[id] = RoleClient
		} else {
			roles[id] = RoleServer
		}
	}
	return roles
}
