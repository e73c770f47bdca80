package iperf3

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/measure"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// TestBitrateAsIperf3 gives iperf3's client and ours the same -b with an
// upper-case suffix, each against an iperf3 server on loopback: both ask
// the server for the same target (iperf3 reads "100M" as 10^8 bit/s, as
// we now do) and send the same bytes within 2% — a rule of 1024 would
// send 4.9% more.
func TestBitrateAsIperf3(t *testing.T) {
	const bitrate, length, seconds = "100M", "1400", "1"
	theirsSrv, port := startIperf3Server(t)
	theirs := startIperf3(t, 20*time.Second, "-c", "127.0.0.1", "-p", strconv.Itoa(port), "-J",
		"-u", "-b", bitrate, "-l", length, "-t", seconds).json(t)
	theirsSrvDoc := theirsSrv.json(t)
	theirTarget := jsondoc.At(t, theirs, "start", "test_start", "target_bitrate")
	theirSent := jsondoc.IntAt(t, theirs, "end", "sum", "bytes")
	if got := jsondoc.At(t, theirsSrvDoc, "start", "test_start", "target_bitrate"); got != theirTarget {
		t.Fatalf("iperf3's server read target %v; its client sent %v", got, theirTarget)
	}

	test, _, err := measure.ParseLineText("client -u -b " + bitrate + " -l " + length + " -t " + seconds)
	if err != nil {
		t.Fatal(err)
	}
	oursSrv, port := startIperf3Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunClient(ctx, ClientConfig{Host: "127.0.0.1", Port: port, Spec: test.Client.Spec})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	oursSrvDoc := oursSrv.json(t)
	// What our client asked the iperf3 server for, as the server read it
	// off the wire: exactly what iperf3's own client asks for "-b 100M".
	if got := jsondoc.At(t, oursSrvDoc, "start", "test_start", "target_bitrate"); got != theirTarget || got != float64(100e6) {
		t.Errorf("-b %s: the iperf3 server read target %v from our client; iperf3's client asks for %v (want 1e8)", bitrate, got, theirTarget)
	}
	ourSent := directionBytes(res)[result.RoleClient][0]
	diff := math.Abs(float64(ourSent)-float64(theirSent)) / float64(theirSent)
	t.Logf("-u -b %s -t %s: iperf3 sent %d bytes, we sent %d (%.2f%% apart)", bitrate, seconds, theirSent, ourSent, 100*diff)
	if diff > 0.02 {
		loadErrorf(t, "-u -b %s -t %s: iperf3 sent %d bytes, we sent %d: %.1f%% apart, want within 2%%", bitrate, seconds, theirSent, ourSent, 100*diff)
	}
}
