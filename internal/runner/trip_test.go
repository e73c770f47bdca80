package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/testutil/loopserver"
)

// --trip-times with --iperf3 is refused before any connection: iperf3's
// senders do not stamp their blocks. The refusal needs no server (the
// port is 1, which nothing here listens on).
func TestTripTimesRefusedWithIperf3(t *testing.T) {
	tt := parse(t, measure.KindClient, "--port=1", "-t", "1", "--iperf3", "--trip-times")
	_, err := Client(context.Background(), tt.Client, "127.0.0.1", Options{})
	if !errors.Is(err, errTripTimesIperf3) {
		t.Fatalf("err = %v, want the --trip-times refusal", err)
	}
}

// Against a wireperf server the receivers time every block, whichever
// end reads them: -n 1M in blocks of -l 16K is 64 blocks a direction,
// however -P shares them out.
func TestTripTimesAgainstLoopbackServer(t *testing.T) {
	port := "--port=" + itoa(loopserver.Start(t).Addr().Port)
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"-R"}, 64},
		{[]string{"-P", "2"}, 64},
		{[]string{"--bidir"}, 128},
	} {
		args := append([]string{port, "-n", "1M", "-l", "16K", "--trip-times", "-i", "0"}, tc.args...)
		res, err := Client(context.Background(), parse(t, measure.KindClient, args...).Client, "127.0.0.1", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var timed int64
		for _, f := range res.Flows() {
			if f.Received == nil || f.Received.TripTimes == nil {
				t.Fatalf("%v: flow %d has no trip times on its receiver", tc.args, f.ID)
			}
			tr := f.Received.TripTimes
			if tr.Negative != 0 || tr.BadBlocks != 0 || tr.Count > 0 && tr.MinUs < 0 {
				t.Errorf("%v: flow %d: %+v", tc.args, f.ID, tr)
			}
			timed += tr.Count
		}
		if timed != tc.want {
			t.Errorf("%v: timed %d blocks, want %d", tc.args, timed, tc.want)
		}
	}
}
