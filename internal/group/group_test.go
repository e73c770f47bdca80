package group

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wireperf/wireperf/internal/agent/agenttest"
	"github.com/wireperf/wireperf/internal/auth"
	"github.com/wireperf/wireperf/internal/lab/labtest"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

func TestMain(m *testing.M) {
	labtest.MaybeServeAgent() // the lab tests' agents and receivers are this binary again
	goleak.VerifyTestMain(m)
}

// loopbackPairs starts n agents and n receivers; agentKeys, per agent,
// default to the controller's key.
func loopbackPairs(t *testing.T, n int, d time.Duration, agentKeys ...auth.Keys) ([]Pair, []agenttest.Server) {
	t.Helper()
	s, err := Options{Duration: d, Interval: 250 * time.Millisecond, Bitrate: "40m"}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var pairs []Pair
	var receivers []agenttest.Server
	for i := range n {
		keys := agenttest.Keys()
		if i < len(agentKeys) && agentKeys[i] != nil {
			keys = agentKeys[i]
		}
		ag := agenttest.Start(t, keys)
		rx := agenttest.Start(t, nil)
		p, err := NewPair(ag.HostPort(), rx.HostPort(), 0)
		if err != nil {
			t.Fatal(err)
		}
		p.Spec = s
		pairs = append(pairs, p)
		receivers = append(receivers, rx)
	}
	return pairs, receivers
}

func testConfig(pairs []Pair) Config {
	cred := agenttest.Key
	return Config{Pairs: pairs, Cred: &cred, StartIn: 300 * time.Millisecond, Timeout: 5 * time.Second}
}

func TestGroupRunsThePairsTogether(t *testing.T) {
	pairs, _ := loopbackPairs(t, 2, 1500*time.Millisecond)
	rep := Run(context.Background(), testConfig(pairs))
	if rep.Failed() {
		t.Fatal(rep.Error)
	}
	var pairSum float64
	for _, p := range rep.Pairs {
		if p.Result == nil || p.Error != "" || p.Clock == nil || p.StartedAt.IsZero() {
			t.Fatalf("pair %s: %+v", p.Pair.Name(), p)
		}
		pairSum += receivedBps(p.Result)
	}
	if rep.Sum.ReceivedBitsPerSecond != pairSum || pairSum < 2*30e6 {
		t.Fatalf("sum %v, pairs %v", rep.Sum.ReceivedBitsPerSecond, pairSum)
	}
	// Every byte of the pairs' intervals lands in one bin or another.
	var binBytes, pairBytes float64
	for _, iv := range rep.Sum.Intervals {
		binBytes += iv.ReceivedBitsPerSecond * (iv.End - iv.Start) / 8
	}
	for _, p := range rep.Pairs {
		for _, iv := range receivedIntervals(rep.Start, p) {
			pairBytes += float64(iv.bytes)
		}
	}
	if math.Abs(binBytes-pairBytes) > 1e-6*pairBytes || pairBytes == 0 {
		t.Fatalf("bins hold %v bytes, the pairs' intervals %v", binBytes, pairBytes)
	}
	// Loopback on a loaded machine: a loose bound here; the lab test holds 5 ms.
	if rep.Skew.Seconds > 0.05 {
		t.Fatalf("start skew %v s", rep.Skew.Seconds)
	}

	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	doc := jsondoc.Decode(t, b.Bytes())
	for _, path := range [][]any{
		{"pairs", 0, "sender"}, {"pairs", 0, "receiver"}, {"pairs", 0, "result", "end"},
		{"pairs", 1, "result", "intervals"}, {"sum", "received_bits_per_second"},
		{"sum", "intervals", 0, "start"}, {"sum", "intervals", 0, "end"},
		{"sum", "intervals", 0, "received_bits_per_second"},
		{"start_skew", "seconds"}, {"start_skew", "uncertainty_seconds"},
	} {
		jsondoc.At(t, doc, path...)
	}
	if got := jsondoc.FloatAt(t, doc, "sum", "received_bits_per_second"); got != pairSum {
		t.Fatalf("JSON sum %v, pairs %v", got, pairSum)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep, 'm'); err != nil || !strings.Contains(text.String(), "start skew") {
		t.Fatalf("text report %q, %v", text.String(), err)
	}
}

func TestGroupWithAWrongKeyOnOneAgentStartsNothing(t *testing.T) {
	other := auth.Keys{agenttest.Key.User: []byte("b61e0c94d27a3f58e1c7a9042d6b3f85")}
	pairs, receivers := loopbackPairs(t, 2, time.Second, nil, other)
	rep := Run(context.Background(), testConfig(pairs))
	if !rep.Failed() || rep.Started || !strings.Contains(rep.Error, "group not started") ||
		!strings.Contains(rep.Error, pairs[1].Sender.String()) || !strings.Contains(rep.Error, "authentication failed") {
		t.Fatalf("report error %q", rep.Error)
	}
	for i, p := range rep.Pairs {
		if p.Result != nil || !p.StartedAt.IsZero() {
			t.Fatalf("pair %d ran: %+v", i, p)
		}
	}
	for i, rx := range receivers {
		if st := rx.Stats(); st.TestsFinished != 0 {
			t.Fatalf("receiver %d ran a test: %+v", i, st)
		}
	}
}

func TestGroupWithAReceiverKilledMidTest(t *testing.T) {
	pairs, receivers := loopbackPairs(t, 2, 2*time.Second)
	cfg := testConfig(pairs)
	cfg.OnStart = func(at time.Time) {
		time.AfterFunc(time.Until(at.Add(700*time.Millisecond)), receivers[1].Kill)
	}
	rep := Run(context.Background(), cfg)
	if !rep.Failed() || !strings.Contains(rep.Error, pairs[1].Name()) {
		t.Fatalf("report error %q", rep.Error)
	}
	ok, broken := rep.Pairs[0], rep.Pairs[1]
	if ok.Error != "" || ok.Result == nil || receivedBps(ok.Result) == 0 {
		t.Fatalf("the healthy pair: %+v", ok)
	}
	if broken.Error == "" || !broken.Partial || broken.Result == nil {
		t.Fatalf("the broken pair: error %q partial %v", broken.Error, broken.Partial)
	}
	var b bytes.Buffer
	_ = WriteJSON(&b, rep)
	if !strings.Contains(b.String(), `"partial": true`) {
		t.Fatal("the JSON report does not mark the broken pair")
	}
}

func TestGroupInterruptedStopsEveryPair(t *testing.T) {
	pairs, _ := loopbackPairs(t, 2, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(pairs)
	cfg.OnStart = func(at time.Time) { time.AfterFunc(time.Until(at.Add(500*time.Millisecond)), cancel) }
	began := time.Now()
	rep := Run(ctx, cfg)
	if rep.Error != "interrupted" {
		t.Fatalf("report error %q", rep.Error)
	}
	if d := time.Since(began); d > 4*time.Second {
		t.Fatalf("the group ran %v after the interrupt at ~0.8 s", d)
	}
	for _, p := range rep.Pairs {
		if p.Result == nil || p.Result.Local.Streams[0].Seconds() > 2 {
			t.Fatalf("pair %s did not stop early: %+v", p.Pair.Name(), p.Result)
		}
	}
}

func TestGroupReceiverWithoutServerStartsNothing(t *testing.T) {
	pairs, receivers := loopbackPairs(t, 2, time.Second)
	receivers[1].Kill()
	rep := Run(context.Background(), testConfig(pairs))
	if rep.Started || !strings.Contains(rep.Error, "setting up the test with "+pairs[1].Receiver.String()) {
		t.Fatalf("report error %q", rep.Error)
	}
	if st := receivers[0].Stats(); st.TestsFinished != 0 {
		t.Fatalf("the other receiver ran a test: %+v", st)
	}
}

func TestGroupRefusesAnOffsetKnownTooLoosely(t *testing.T) {
	pairs, receivers := loopbackPairs(t, 1, time.Second)
	cfg := testConfig(pairs)
	cfg.MaxUncertainty = time.Nanosecond // no exchange is that quick
	rep := Run(context.Background(), cfg)
	if rep.Started || !strings.Contains(rep.Error, "clock offset known within") || rep.Pairs[0].Clock == nil {
		t.Fatalf("report error %q", rep.Error)
	}
	if st := receivers[0].Stats(); st.TestsFinished != 0 || st.Running != 0 {
		t.Fatalf("the receiver saw a test: %+v", st)
	}
}

// receiverKey is the agents' key for receivers that require one: another
// user and key than the controller's, as on real hosts.
var receiverKey = auth.Credential{User: "agent-a1", Key: []byte("receiver-key-0123456789")}

// keyedPair starts an agent holding cred for receivers and a receiver that
// requires receiverKey.
func keyedPair(t *testing.T, cred *auth.Credential) (Pair, agenttest.Server) {
	t.Helper()
	ag := agenttest.StartWith(t, agenttest.Options{AgentKeys: agenttest.Keys(), ClientCred: cred})
	rx := agenttest.StartWith(t, agenttest.Options{Keys: auth.Keys{receiverKey.User: receiverKey.Key}})
	p, err := NewPair(ag.HostPort(), rx.HostPort(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec, err = (Options{Duration: time.Second, Interval: 250 * time.Millisecond, Bitrate: "20m", UDP: true}).Spec(); err != nil {
		t.Fatal(err)
	}
	return p, rx
}

func TestGroupWithAReceiverThatRequiresAKey(t *testing.T) {
	p, rx := keyedPair(t, &receiverKey)
	rep := Run(context.Background(), testConfig([]Pair{p}))
	if rep.Failed() {
		t.Fatal(rep.Error)
	}
	if got := rep.Pairs[0].Result; got == nil || receivedBps(got) == 0 {
		t.Fatalf("the pair: %+v", rep.Pairs[0])
	}
	if st := rx.Settled(t); st.TestsAccepted != 1 || st.AuthFailed != 0 {
		t.Fatalf("receiver: %+v", st)
	}
}

func TestGroupWhoseReceiverRefusesTheAgentsKeyStartsNothing(t *testing.T) {
	wrong := auth.Credential{User: receiverKey.User, Key: []byte("not-the-receivers-key-0123")}
	for _, tc := range []struct {
		name string
		cred *auth.Credential
		want string
	}{
		// The controller is told only that the target refused: the agent's
		// own log says why (a port scanner for key holders otherwise).
		{"wrong key", &wrong, "refused by target"},
		{"no key", nil, "refused by target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good, goodRx := loopbackPairs(t, 1, time.Second)
			bad, badRx := keyedPair(t, tc.cred)
			pairs := []Pair{good[0], bad}
			rep := Run(context.Background(), testConfig(pairs))
			if rep.Started || strings.Contains(rep.Error, "\n") ||
				!strings.Contains(rep.Error, "group not started: pair "+bad.Name()) || !strings.Contains(rep.Error, tc.want) {
				t.Fatalf("report error %q", rep.Error)
			}
			t.Log(rep.Error)
			// The healthy pair's receiver had its test prepared; the agent
			// abandons it unstarted.
			if st := goodRx[0].Stats(); st.TestsFinished != 0 {
				t.Fatalf("the healthy pair's receiver ran a test: %+v", st)
			}
			if st := badRx.Stats(); st.TestsAccepted != 0 || st.Running != 0 {
				t.Fatalf("the keyed receiver accepted a test: %+v", st)
			}
		})
	}
}

func TestGroupWithAnOmittedStartOverLoopback(t *testing.T) {
	pairs, _ := loopbackPairs(t, 2, time.Second)
	for i := range pairs {
		pairs[i].Spec.Omit = 500 * time.Millisecond
	}
	rep := Run(context.Background(), testConfig(pairs))
	if rep.Failed() {
		t.Fatal(rep.Error)
	}
	// The bins hold every byte the pairs' rows hold (the tails among
	// them), no bin reads above the pairs' peak rates added up, and no
	// bin runs past the last receiver's last byte.
	var rows, peaks, lastByte float64
	for _, p := range rep.Pairs {
		var peak float64
		for _, r := range receivedIntervals(rep.Start, p) {
			rows += float64(r.bytes)
			lastByte = max(lastByte, r.end)
			if r.end-r.start >= 0.1 { // a sliver's rate is noise
				peak = max(peak, float64(r.bytes)/(r.end-r.start))
			}
		}
		peaks += peak
	}
	var bins float64
	for k, iv := range rep.Sum.Intervals {
		if iv.Omitted != (iv.End <= 0.5+1e-9) || iv.ReceivedBitsPerSecond <= 0 {
			t.Errorf("interval %d: %+v", k, iv)
		}
		b := iv.ReceivedBitsPerSecond * (iv.End - iv.Start) / 8
		bins += b
		t.Logf("[SUM] %.3f-%.3f %v: %.0f bytes", iv.Start, iv.End, iv.Omitted, b)
		if iv.End-iv.Start >= 0.1 && b/(iv.End-iv.Start) > 1.01*peaks {
			t.Errorf("interval %d reads %.0f B/s, above the pairs' peaks added up, %.0f", k, b/(iv.End-iv.Start), peaks)
		}
		if iv.End > lastByte+1e-9 {
			t.Errorf("interval %d ends at %.3f, after the last byte at %.3f", k, iv.End, lastByte)
		}
	}
	if math.Abs(bins-rows) > 1e-6*rows {
		t.Errorf("the bins hold %.0f bytes, the pairs' rows %.0f", bins, rows)
	}
	var pairSum float64
	for _, p := range rep.Pairs {
		pairSum += receivedBps(p.Result)
	}
	if rep.Sum.ReceivedBitsPerSecond != pairSum {
		t.Fatalf("total %v, pairs %v", rep.Sum.ReceivedBitsPerSecond, pairSum)
	}
}
