package result

import "testing"

func TestJoinFrames(t *testing.T) {
	p := func(n int64) *Percentiles { return &Percentiles{Count: n, Min: 1, Mean: 2, Max: 3} }
	a := &Frames{Sent: 2, Late: 1, LateMaxMs: 5, Seen: 2, Complete: 2, Latency: p(2), JitterMs: 1, JitterSamples: 1}
	b := &Frames{Sent: 3, LateMaxMs: 4, Seen: 3, Complete: 2, Incomplete: 1, Skipped: 1, Latency: p(2), JitterMs: 0.5, JitterSamples: 2}
	j := JoinFrames(a, b)
	if j.Sent != 5 || j.Late != 1 || j.LateMaxMs != 5 || j.Seen != 5 || j.Complete != 4 || j.Incomplete != 1 || j.Skipped != 1 ||
		j.JitterMs != 0.5 || j.JitterSamples != 3 {
		t.Errorf("joined %+v", *j)
	}
	if j.Latency != nil {
		t.Errorf("two rows' percentiles pooled: %+v", *j.Latency)
	}
	if j := JoinFrames(&Frames{Sent: 1}, b); j.Latency == nil || j.Latency == b.Latency || *j.Latency != *b.Latency {
		t.Errorf("a row without latency joined to one with: %+v (want a copy of the other's)", j.Latency)
	}
	if JoinFrames(nil, nil) != nil || JoinFrames(a, nil) == a || *JoinFrames(a, nil) != *a {
		t.Error("a join with nil must copy the other side")
	}
	u := JoinUDP(&UDP{Frames: a}, &UDP{Frames: b})
	if u.Frames == nil || u.Frames.Sent != 5 {
		t.Errorf("JoinUDP lost the frames: %+v", u.Frames)
	}
}
