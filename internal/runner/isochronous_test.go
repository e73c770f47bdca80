package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

func TestIsochronousRefusedWithIperf3(t *testing.T) {
	tt := parse(t, measure.KindClient, "--port=1", "-t", "1", "-u", "--iperf3", "--isochronous")
	_, err := Client(context.Background(), tt.Client, "127.0.0.1", Options{})
	if !errors.Is(err, errIsochronousIperf3) {
		t.Fatalf("err = %v, want the --isochronous refusal", err)
	}
}

// rowFrames adds up the frame figures of one stream's rows on end e.
func rowFrames(e *result.End, id int, sender bool) (sent, complete int64) {
	for _, iv := range e.Intervals {
		for _, si := range iv.Streams {
			if si.ID == id && si.Sender == sender && si.UDP != nil && si.UDP.Frames != nil {
				sent += si.UDP.Frames.Sent
				complete += si.UDP.Frames.Complete
			}
		}
	}
	return sent, complete
}

// On loopback every frame a sender sends arrives whole, whichever end
// sends (-R, --bidir), and the rows add up to the totals.
func TestIsochronousAgainstLoopbackServer(t *testing.T) {
	port := "--port=" + itoa(loopserver.Start(t).Addr().Port)
	for _, mode := range [][]string{nil, {"-R"}, {"--bidir"}} {
		args := append([]string{port, "-u", "--isochronous=50:4m,1m", "--ipg", "0.2", "-t", "1", "-i", "0.5"}, mode...)
		res, err := Client(context.Background(), parse(t, measure.KindClient, args...).Client, "127.0.0.1", Options{})
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		flows := res.Flows()
		if want := 1 + len(mode) - map[bool]int{true: 1}[len(mode) == 1 && mode[0] == "-R"]; len(flows) != want {
			t.Fatalf("%v: %d flows, want %d", mode, len(flows), want)
		}
		for _, f := range flows {
			if f.Sent == nil || f.Received == nil || f.Sent.UDP.Frames == nil || f.Received.UDP.Frames == nil {
				t.Fatalf("%v: flow %d without frames on both ends", mode, f.ID)
			}
			s, r := f.Sent.UDP.Frames, f.Received.UDP.Frames
			t.Logf("%v flow %d: sender %+v; receiver %+v, latency %+v", mode, f.ID, *s, *r, r.Latency)
			if s.Sent < 40 || r.Complete+r.Cut != s.Sent || r.Incomplete != 0 || r.Skipped != 0 || r.Negative != 0 {
				t.Errorf("%v flow %d: %d frames sent, received %d complete, %d cut, %d incomplete, %d skipped",
					mode, f.ID, s.Sent, r.Complete, r.Cut, r.Incomplete, r.Skipped)
			}
			if r.Latency == nil || r.Latency.Min <= 0 || r.Latency.Max < r.Latency.Mean {
				t.Errorf("%v flow %d: latency %+v", mode, f.ID, r.Latency)
			}
			sendEnd, recvEnd := &res.Local, &res.Remote
			if f.SenderRole != res.Local.Role {
				sendEnd, recvEnd = recvEnd, sendEnd
			}
			if sent, _ := rowFrames(sendEnd, f.ID, true); sent != s.Sent {
				t.Errorf("%v flow %d: the sender's rows add up to %d frames, its total is %d", mode, f.ID, sent, s.Sent)
			}
			if _, complete := rowFrames(recvEnd, f.ID, false); complete != r.Complete {
				t.Errorf("%v flow %d: the receiver's rows add up to %d complete frames, its total is %d", mode, f.ID, complete, r.Complete)
			}
		}
	}
}
