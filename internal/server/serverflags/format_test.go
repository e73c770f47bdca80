package serverflags

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
	"github.com/wireperf/wireperf/internal/units"
)

// receiverLine is the summary's receiver row of a report.
func receiverLine(report string) string {
	for _, l := range strings.Split(report, "\n") {
		if strings.HasSuffix(l, "receiver") {
			return l
		}
	}
	return ""
}

// The server's -f is the unit of its own report, and of the report a
// client's --get-server-output gets when the client names no unit; a
// client's -f wins in the report it gets.
func TestServerFormat(t *testing.T) {
	f := parse(t, "-f", "m", "-B", "127.0.0.1", "-p", "0", "-i", "0")
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	var out syncbuf.Buffer
	srv := f.Server(&out, slog.New(slog.DiscardHandler))
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		<-served
	}()
	s := spec.Default()
	s.Duration, s.Interval = 500*time.Millisecond, 0
	for _, tc := range []struct {
		client units.Format
		want   string
	}{{0, " Mbits/sec"}, {'K', " KBytes/sec"}} {
		res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: "127.0.0.1", Port: srv.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s,
			ServerOutput: true, Format: tc.client,
		}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ServerOutput == nil || !strings.Contains(receiverLine(res.ServerOutput.Text), tc.want) {
			t.Errorf("client -f %q: the server output's receiver row %q, want %q", byte(tc.client), receiverLine(res.ServerOutput.Text), tc.want)
		}
	}
	cancel()
	<-served
	served <- nil // the deferred stop finds it stopped
	if line := receiverLine(out.String()); !strings.Contains(line, " Mbits/sec") {
		t.Errorf("the server's own report's receiver row %q, want Mbits/sec (its -f m):\n%s", line, out.String())
	}
}
