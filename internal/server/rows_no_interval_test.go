package server

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/session"
)

// A client that asks for no rows (-i 0) still gets a server that shows
// its own, as iperf3's server does (the client's -i never reaches it):
// rows of a second, live in the server's report and in the report that
// --get-server-output sends, while the client hears none.
func TestServerRowsWhenTheClientAsksNone(t *testing.T) {
	var log liveLog
	ts := startServer(t, func(c *Config) {
		c.ServerOutput = emit.ServerOutput(true)
		c.Live = func(int64, net.Addr) result.Observer { return &log }
	})
	s := quickSpec()
	s.Duration, s.Interval = 2*time.Second, 0
	res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s, ServerOutput: true,
	}})
	ended := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Local.Intervals) + len(res.Remote.Intervals); n != 0 {
		t.Errorf("the client asked -i 0 and has %d rows", n)
	}
	log.mu.Lock()
	if len(log.intervals) < 2 || !log.intervals[0].Before(ended.Add(-500*time.Millisecond)) {
		t.Errorf("%d live rows on the server (times %v, end %v); want a row a second from the start", len(log.intervals), log.intervals, ended)
	}
	log.mu.Unlock()
	if res.ServerOutput == nil {
		t.Fatal("no server output")
	}
	// Its rows come before the summary's separator: a second each (a
	// loaded machine's timer cuts them a little late), then the tail.
	text := res.ServerOutput.Text
	rows, _, _ := strings.Cut(text, "- - -")
	row := regexp.MustCompile(`(?m)^\[\s*1\]\s+(\d+\.\d\d)-(\d+\.\d\d)\s+sec`)
	var whole int
	for _, m := range row.FindAllStringSubmatch(rows, -1) {
		from, _ := strconv.ParseFloat(m[1], 64)
		to, _ := strconv.ParseFloat(m[2], 64)
		if to-from > 0.9 && to-from < 1.5 {
			whole++
		}
	}
	if whole < 2 {
		t.Errorf("the server's report has %d rows of a second, want 2:\n%s", whole, text)
	}
}
