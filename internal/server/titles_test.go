package server

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/testutil/iperf3bin"
)

// forgingTitle would start a line of its own in the server's report,
// under another test's prefix, and clear the terminal.
const forgingTitle = "x\r[t9 6.6.6.6:1] forged\n\x1b[2J"

// A native client's title with control characters is refused at the
// request's check, with the reason; the server goes on serving.
func TestForgingTitleRefusedOnTheControlChannel(t *testing.T) {
	ts := startServer(t, nil)
	c, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := proto.WriteGreeting(c, proto.MagicControl); err != nil {
		t.Fatal(err)
	}
	if _, err := proto.ReadGreeting(c, proto.MagicServer); err != nil {
		t.Fatal(err)
	}
	s := quickSpec()
	s.Title = forgingTitle
	writeRequest(t, c, s)
	var e proto.Error
	readFrameOf(t, c, proto.TypeError, &e)
	if !strings.Contains(e.Message, `bad test request: -T "x\r[t9 6.6.6.6:1] forged\n\x1b[2J": a title may not hold control characters`) {
		t.Fatalf("refusal %q: want the title's check", e.Message)
	}
	mustRun(t, ts, quickSpec())
}

// An iperf3 client's title (-T) goes through the same check, and its test
// never runs.
func TestForgingTitleRefusedFromIperf3(t *testing.T) {
	bin := iperf3bin.Need(t)
	ts := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-c", "127.0.0.1", "-p", strconv.Itoa(ts.Addr().Port), "-t", "1", "-T", forgingTitle).CombinedOutput()
	if err == nil {
		t.Fatalf("iperf3 with a forging title ran:\n%q", out)
	}
	// iperf3's protocol carries no reason: its client says the test's
	// initialization failed.
	waitFor(t, func() bool { st := ts.Stats(); return st.TestsRefused+st.BadControl == 1 })
	if st := ts.Stats(); st.TestsAccepted != 0 {
		t.Fatalf("the server ran the test: %+v", st)
	}
	mustRun(t, ts, quickSpec())
}
