package advise

import (
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/figures"
	"github.com/wireperf/wireperf/internal/result"
)

// series is a synthetic TCP_INFO timeline every step seconds over secs:
// the rate each sample delivers at (bit/s, from rateAt) and the
// retransmitted segments each adds (from retransAt). Its clock is the
// samples' own T, set here, not the machine's.
func series(secs, step float64, rateAt func(t float64) float64, retransAt func(t float64) uint32) *result.TCPTimeline {
	tl := &result.TCPTimeline{}
	var acked uint64
	var retrans uint32
	for i := 1; float64(i)*step <= secs+1e-9; i++ {
		t := float64(i) * step
		acked += uint64(rateAt(t) * step / 8)
		retrans += retransAt(t)
		tl.Samples = append(tl.Samples, result.TCPSample{T: t, BytesAcked: acked, TotalRetrans: retrans})
	}
	return tl
}

// The field report's 215 ms, 1 Gbit/s path, 13 s test: BBR's startup
// overshoots the queue until 3 s (50,076 segments retransmitted), then the
// stream holds 890 Mbit/s.
func bbrOvershoot(t float64) float64 {
	if t <= 3 {
		return 300e6
	}
	return 890e6
}

func retransUntil(end float64, n uint32) func(float64) uint32 {
	return func(t float64) uint32 {
		if t <= end {
			return n
		}
		return 0
	}
}

func TestSteadyOf(t *testing.T) {
	tl := series(13, 0.1, bbrOvershoot, retransUntil(3, 1669))
	st := SteadyOf(tl, 3.0)
	if st == nil {
		t.Fatal("no steady span")
	}
	if st.From < 7.9 || st.From > 8.1 || st.To < 12.9 {
		t.Errorf("span %.1f–%.1f s, want the last half after slow start: 8.0–13.0", st.From, st.To)
	}
	all := tl.Samples[len(tl.Samples)-1].TotalRetrans
	if st.Retrans != 0 || st.Before != all || all < 29*1669 {
		t.Errorf("retransmits %d in the span, %d before; want 0 and all %d", st.Retrans, st.Before, all)
	}
	if d := st.RateBps/890e6 - 1; d > 0.001 || d < -0.001 {
		t.Errorf("steady rate %.1f Mbit/s, want 890", st.RateBps/1e6)
	}
	if st.Rising {
		t.Error("a flat rate read as rising")
	}
	// CUBIC growing back: the rate rises through the span.
	cubic := series(13, 0.1, func(t float64) float64 { return 40e6 * t }, retransUntil(3, 100))
	if st := SteadyOf(cubic, 3.0); st == nil || !st.Rising || st.Retrans != 0 {
		t.Errorf("a rising rate: %+v", st)
	}
	if SteadyOf(tl, 0) != nil || SteadyOf(nil, 3) != nil || SteadyOf(series(3.2, 0.1, bbrOvershoot, retransUntil(3, 1)), 3) != nil {
		t.Error("a span read where there is none (slow start not ended, no timeline, too few samples)")
	}
}

// overshootEvidence is advise's evidence on the 215 ms, 1 Gbit/s path:
// one stream averaging 777 Mbit/s over 13 s with 50,076 retransmits, all
// in slow start, the steady state at steadyBps.
func overshootEvidence(steadyBps float64, rising bool, cc string) Evidence {
	m := measured(777e6, 13, losses(50076, 12, 1_300_000_000, 72_000_000))
	m.TCP.SlowStart = &figures.SlowStartFigures{Ended: true, End: 3.0, Cause: result.SlowStartLoss, Share: 3.0 / 13, Duration: 13, RateBefore: 300e6, RateAfter: 860e6}
	m.Steady = &Steady{From: 8, To: 13, RateBps: steadyBps, Before: 50076, Rising: rising}
	snd := linuxHost(result.RoleClient, "10.77.1.2", 128<<20, 128<<20)
	snd.Limits.Congestion = "bbr"
	snd.Socket = &result.Socket{Congestion: cc}
	return Evidence{Sender: snd, Receiver: linuxHost(result.RoleServer, "10.77.2.2", 128<<20, 128<<20),
		BaselineRTT: 215 * time.Millisecond, Bottleneck: 1e9, BottleneckGiven: true, Single: m}
}

func TestClassifySlowStartOvershoot(t *testing.T) {
	// Steady at 890 of 941.5: the path is full; no drop hunting.
	v := Classify(overshootEvidence(890e6, false, "bbr"))
	if v.Limit != LimitNetwork || !strings.HasPrefix(v.Summary, "network-limited (path full)") {
		t.Fatalf("%s: %s", v.Limit, v.Summary)
	}
	all := v.Summary + strings.Join(v.Details, "\n")
	for _, want := range []string{"890 Mbits/sec", "from 8.0 to 13.0 s", "50,076 segments retransmitted were before 8.0 s", "slow start ended at 3.0 s", "bbr's slow start"} {
		if !strings.Contains(all, want) {
			t.Errorf("verdict lacks %q:\n%s", want, all)
		}
	}
	a := Recommend(overshootEvidence(890e6, false, "bbr"), v)
	if s := strings.Join(a.Steps, "\n"); strings.Contains(s, "drop counters") || strings.Contains(s, "-C bbr") {
		t.Errorf("advice hunts for drops on a full path:\n%s", s)
	}

	// CUBIC still growing back at 600 Mbit/s: the test was too short.
	v = Classify(overshootEvidence(600e6, true, "cubic"))
	if v.Limit != LimitSlowStart || !strings.HasPrefix(v.Summary, "test too short: steady state not reached") || !strings.Contains(v.Summary, "still rising") {
		t.Fatalf("%s: %s", v.Limit, v.Summary)
	}
	if d := strings.Join(v.Details, "\n"); !strings.Contains(d, "cubic's slow start") {
		t.Errorf("the tested algorithm not named: %s", d)
	}

	// Losses in the steady span too: loss-limited, as before.
	e := overshootEvidence(600e6, false, "cubic")
	e.Single.Steady.Retrans = 400
	if v := Classify(e); v.Limit != LimitCongestion {
		t.Errorf("losses all along: %s (%s)", v.Limit, v.Summary)
	}
}

// probingEvidence is advise's evidence on the 215 ms, 1 Gbit/s path with
// losses in the steady span too: steadyBps from 8 to 13 s with
// retransBytes retransmitted over it (retrans segments of 1448 bytes).
func probingEvidence(steadyBps float64, retrans uint32, cc string) Evidence {
	e := overshootEvidence(steadyBps, false, cc)
	st := e.Single.Steady
	st.Retrans, st.RetransBytes = retrans, uint64(retrans)*1448
	st.Before = 29405
	return e
}

// TestClassifyFullWhileProbing: the three cases of a stream that lost
// packets after slow start. BBR's probing of a full 50 ms queue (the lab's
// 215 ms / 1g path: 932.4 Mbit/s from 8 to 13 s with 1,163 segments
// retransmitted, 0.3% of the bytes) is the path full; so is a steady span
// at the bottleneck's rate with no loss; a path with random loss that
// keeps the stream below the bottleneck is loss-limited.
func TestClassifyFullWhileProbing(t *testing.T) {
	ideal := figures.LineRateGoodput(1e9, 0)
	bbr := probingEvidence(932.4e6, 1163, "bbr")
	if got := bbr.Single.Steady.LossShare(); got < 0.002 || got > 0.003 {
		t.Fatalf("the injected span's loss share %.4f, want BBR's 0.2-0.3%%", got)
	}
	v := Classify(bbr)
	if v.Limit != LimitNetwork || !strings.HasPrefix(v.Summary, "network-limited (path full)") {
		t.Fatalf("bbr probing a full queue: %s: %s", v.Limit, v.Summary)
	}
	all := v.Summary + "\n" + strings.Join(v.Details, "\n")
	for _, want := range []string{"932.4 Mbits/sec", pct(932.4e6 / ideal), "941.5 Mbits/sec", "from 8.0 to 13.0 s", "losing " + pct2(bbr.Single.Steady.LossShare()) + " of its bytes",
		"1,163 segments retransmitted", "bbr's probing", "29,405 segments retransmitted before 8.0 s"} {
		if !strings.Contains(all, want) {
			t.Errorf("verdict lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "dropped") {
		t.Errorf("router drops named without a router's counts:\n%s", all)
	}
	a := Recommend(bbr, v)
	if s := strings.Join(a.Steps, "\n"); strings.Contains(s, "drop counters") || !strings.Contains(s, "after slow start one stream holds 932 Mbits/sec") {
		t.Errorf("advice on a full path:\n%s", s)
	}
	if a.ExpectedBps != 932.4e6 {
		t.Errorf("expected afterwards %.1f Mbit/s, want the steady 932.4", a.ExpectedBps/1e6)
	}

	// The lab's router says where the drops were: its queue.
	bbr.PathDrops = &PathDrops{Where: "the lab's router", Queue: 617322}
	v = Classify(bbr)
	if d := strings.Join(v.Details, "\n"); v.Limit != LimitNetwork || !strings.Contains(d, "the lab's router dropped 617,322 packets at its queue (the bottleneck full) and 0 otherwise") {
		t.Errorf("router's queue drops: %s\n%s", v.Limit, d)
	}
	// A router that dropped at random too: a lossy path, whatever the rate.
	bbr.PathDrops.Other = 5000
	if v := Classify(bbr); v.Limit != LimitCongestion || !strings.Contains(strings.Join(v.Details, "\n"), "and 5,000 otherwise") {
		t.Errorf("random drops at the router: %s (%s)\n%s", v.Limit, v.Summary, strings.Join(v.Details, "\n"))
	}

	// Full with no loss after slow start.
	v = Classify(overshootEvidence(932.4e6, false, "bbr"))
	if v.Limit != LimitNetwork || !strings.Contains(v.Summary, "without a retransmit") {
		t.Errorf("full without loss: %s: %s", v.Limit, v.Summary)
	}

	// Really lossy: random loss keeps CUBIC at 300 Mbit/s while it loses
	// 0.1%; and a stream near the path's rate losing 3% is not probing.
	for _, e := range []Evidence{probingEvidence(300e6, 130, "cubic"), probingEvidence(900e6, 12000, "bbr"), probingEvidence(940e6, 12000, "bbr")} {
		st := e.Single.Steady
		if v := Classify(e); v.Limit != LimitCongestion || !strings.HasPrefix(v.Summary, "congestion/loss-limited") {
			t.Errorf("%.0f Mbit/s losing %.2f%%: %s (%s)", st.RateBps/1e6, 100*st.LossShare(), v.Limit, v.Summary)
		} else if s := strings.Join(Recommend(e, v).Steps, "\n"); !strings.Contains(s, "drop counters") {
			t.Errorf("a lossy path without advice to find the drops:\n%s", s)
		}
	}
	// The lab's CUBIC at 0.1% random loss: 4.41 Mbit/s after slow start,
	// too slow to lose a packet in 6 s; the router's random drops say the
	// path is lossy, not that the test was too short.
	cubic := overshootEvidence(4.41e6, true, "cubic")
	cubic.Single.GoodputBps, cubic.Single.TCP.Retransmits, cubic.Single.TCP.BytesRetrans, cubic.Single.TCP.BytesSent = 6.56e6, 8, 8*1448, 10_000_000
	if v := Classify(cubic); v.Limit != LimitSlowStart {
		t.Fatalf("without the router's counts: %s (%s)", v.Limit, v.Summary)
	}
	cubic.PathDrops = &PathDrops{Where: "the lab's router", Queue: 16329, Other: 104}
	if v := Classify(cubic); v.Limit != LimitCongestion {
		t.Errorf("random drops at the router, CUBIC at 4.41 Mbit/s: %s (%s)", v.Limit, v.Summary)
	}

	// Just below the stated tolerance: 94% of the path with BBR's loss
	// rate is not the path full.
	if v := Classify(probingEvidence(0.94*ideal, 1163, "bbr")); v.Limit == LimitNetwork {
		t.Errorf("94%% of the path read as full: %s", v.Summary)
	}
}

func TestSteadyLossShare(t *testing.T) {
	tl := series(13, 0.1, bbrOvershoot, func(float64) uint32 { return 0 })
	// 1448 bytes retransmitted in each sample after 3 s.
	for i := range tl.Samples {
		if s := &tl.Samples[i]; s.T > 3 {
			s.BytesRetrans = uint64(1448 * (i + 1 - 30))
		}
	}
	st := SteadyOf(tl, 3)
	if st == nil {
		t.Fatal("no steady span")
	}
	if st.RetransBytes != 50*1448 {
		t.Errorf("retransmitted %d bytes in the span, want %d", st.RetransBytes, 50*1448)
	}
	acked := 890e6 / 8 * (st.To - st.From)
	if want := float64(st.RetransBytes) / (acked + float64(st.RetransBytes)); !near(st.LossShare(), want, 0.01) {
		t.Errorf("loss share %.6f, want %.6f", st.LossShare(), want)
	}
	if (&Steady{}).LossShare() != 0 {
		t.Error("an empty span has a loss share")
	}
}

// TestNotePathDrops: a router's drops noted after the tests draw the
// verdict again: a queue's alone keep the path full, others make it lossy.
func TestNotePathDrops(t *testing.T) {
	e := probingEvidence(932.4e6, 1163, "bbr")
	rep := &Report{evidence: &e, Verdict: Classify(e)}
	rep.NotePathDrops("the lab's router", 200131, 0)
	if rep.Verdict.Limit != LimitNetwork || rep.PathDrops == nil || rep.PathDrops.Queue != 200131 {
		t.Errorf("queue drops only: %s, %+v", rep.Verdict.Summary, rep.PathDrops)
	}
	rep.NotePathDrops("the lab's router", 200131, 800)
	if rep.Verdict.Limit != LimitCongestion || rep.Advice.ExpectedBps == 0 && len(rep.Advice.Steps) == 0 {
		t.Errorf("random drops too: %s", rep.Verdict.Summary)
	}
	// A report without tests keeps its (empty) verdict.
	empty := &Report{}
	empty.NotePathDrops("r", 1, 1)
	if empty.Verdict.Limit != "" || empty.PathDrops == nil {
		t.Errorf("a report without evidence: %+v", empty)
	}
}
