package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/control"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/proto"
	"github.com/wireperf/wireperf/internal/session"
	"github.com/wireperf/wireperf/internal/units"
)

// A client that asks for the server's report (--get-server-output) gets
// the server's own text of the test after the end reports: its accepted
// connection and its figures, which are the client's figures seen from
// the other end.
func TestServerOutputText(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ServerOutput = emit.ServerOutput(true) })
	s := quickSpec()
	res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: s, ServerOutput: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerOutput == nil || res.ServerOutput.Text == "" {
		t.Fatalf("no server output: %+v", res.ServerOutput)
	}
	text := res.ServerOutput.Text
	if !strings.HasPrefix(text, "Accepted connection from 127.0.0.1\n") {
		t.Errorf("the server's report does not open with its accepted connection:\n%s", text)
	}
	// The server's record names the client's data connection, the
	// server's own address local and the client's remote, as iperf2's
	// and iperf3's servers label them.
	_, clientPort, _ := strings.Cut(res.Local.Streams[0].LocalAddr, ":")
	_, serverPort, _ := strings.Cut(res.Local.Streams[0].RemoteAddr, ":")
	want := "local 127.0.0.1 port " + serverPort + " connected to 127.0.0.1 port " + clientPort + "\n"
	if !strings.Contains(text, want) {
		t.Errorf("the server's report does not say %q:\n%s", want, text)
	}
	if !strings.Contains(text, "receiver") || !strings.Contains(text, "CPU Utilization: local/server") {
		t.Errorf("the server's report has no summary:\n%s", text)
	}

	// Through the client's emitters: iperf3's heading in text, its field
	// in JSON.
	var b strings.Builder
	if err := (&emit.Text{W: &b}).Summary(res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nServer output:\n"+text) {
		t.Errorf("the client's text does not show the server's report after \"Server output:\":\n%s", b.String())
	}
	b.Reset()
	if err := (&emit.JSON{W: &b}).Write(res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Text string `json:"server_output_text"`
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Text != text {
		t.Errorf("server_output_text = %q, want the server's report", doc.Text)
	}
}

// The client's -f reaches the server's report: the text is in its unit,
// where a client that names none gets the server's adaptive default.
func TestServerOutputFormat(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ServerOutput = emit.ServerOutput(true) })
	for _, tc := range []struct {
		format units.Format
		want   string
	}{
		{'b', " bits/sec"},
		{'K', " KBytes/sec"},
		{0, "bits/sec"},
	} {
		res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: quickSpec(),
			ServerOutput: true, Format: tc.format,
		}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ServerOutput == nil {
			t.Fatalf("-f %v: no server output", tc.format)
		}
		var summary string
		for _, line := range strings.Split(res.ServerOutput.Text, "\n") {
			if strings.HasSuffix(line, "receiver") {
				summary = line
			}
		}
		if !strings.Contains(summary, tc.want) {
			t.Errorf("-f %v: the server's summary row %q does not say %q", tc.format, summary, tc.want)
		}
		if tc.format == 'b' && strings.ContainsAny(strings.TrimSuffix(summary, "receiver"), "KMG") {
			t.Errorf("-f b: the server's summary row %q has a scaled unit", summary)
		}
		if tc.format == 'K' && strings.Contains(summary, "bits/sec") {
			t.Errorf("-f K: the server's summary row %q is in bits", summary)
		}
	}
}

// A server that writes JSON (-J) sends its document, which -J carries as
// server_output_json; a client that doesn't ask gets nothing.
func TestServerOutputJSON(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ServerOutput = emit.ServerOutput(false) })
	run := func(ask bool) *session.ClientConfig {
		return &session.ClientConfig{ClientConfig: control.ClientConfig{
			Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: quickSpec(), ServerOutput: ask,
		}}
	}
	res, err := session.RunClient(context.Background(), *run(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerOutput == nil || len(res.ServerOutput.JSON) == 0 {
		t.Fatalf("no JSON server output: %+v", res.ServerOutput)
	}
	var server struct {
		End struct {
			SumReceived struct {
				Bytes int64 `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(res.ServerOutput.JSON, &server); err != nil {
		t.Fatal(err)
	}
	if server.End.SumReceived.Bytes == 0 {
		t.Errorf("the server's document has no received bytes: %s", res.ServerOutput.JSON)
	}
	var b strings.Builder
	if err := (&emit.JSON{W: &b}).Write(res); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["server_output_json"]; !ok {
		t.Errorf("-J has no server_output_json")
	}

	res, err = session.RunClient(context.Background(), *run(false))
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerOutput != nil {
		t.Errorf("server output without asking: %+v", res.ServerOutput)
	}
}

// A server that sends no report (as one from before --get-server-output,
// which ignores the request's field) doesn't promise one, and the client
// doesn't wait for it.
func TestServerOutputNotPromised(t *testing.T) {
	ts := startServer(t, nil)
	began := time.Now()
	res, err := session.RunClient(context.Background(), session.ClientConfig{ClientConfig: control.ClientConfig{
		Host: ts.Addr().IP.String(), Port: ts.Addr().Port, ConnectTimeout: 5 * time.Second, Spec: quickSpec(), ServerOutput: true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerOutput != nil {
		t.Errorf("server output from a server with none: %+v", res.ServerOutput)
	}
	if took := time.Since(began); took >= control.EndReportTimeout {
		t.Errorf("the 1 s test took %v: the client waited for a report it was not promised", took)
	}
}

// The server's report for --get-server-output fits a frame with room to
// spare: emit renders it within emit.MaxServerOutput.
func TestServerOutputCapFitsAFrame(t *testing.T) {
	if emit.MaxServerOutput > proto.MaxFrame/2 {
		t.Fatalf("emit.MaxServerOutput %d passes half a frame (%d)", emit.MaxServerOutput, proto.MaxFrame/2)
	}
}
