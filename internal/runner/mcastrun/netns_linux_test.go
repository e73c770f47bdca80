package mcastrun

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/mcast/mcasttest"
	"github.com/wireperf/wireperf/internal/testutil/syncbuf"
	"github.com/wireperf/wireperf/internal/units"
)

// TestClientAndServers: `wireperf -c GROUP -u -T 1` and two `wireperf -s
// -B GROUP -1` on one host, one printing text, one JSON: each receiver
// reports the sender's every datagram, and the sender what it sent.
func TestClientAndServers(t *testing.T) {
	mcasttest.NeedRoot(t)
	ns := mcasttest.OneHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var text, js syncbuf.Buffer
	srv := func(w *syncbuf.Buffer, asJSON bool) <-chan error {
		s := Server{Group: "239.39.5.1", Port: 5005, Interval: time.Second, Format: units.AdaptiveBits, JSON: asJSON, Once: true}
		return mcasttest.Go(ns, func() error { return s.Run(ctx, w) })
	}
	textDone, jsonDone := srv(&text, false), srv(&js, true)
	for ctx.Err() == nil { // until both receivers hold the group ("users 2")
		m, _ := exec.Command("ip", "-n", ns, "maddr", "show", "dev", "v0").Output()
		if bytes.Contains(m, []byte("239.39.5.1 users 2")) {
			break
		}
		time.Sleep(20 * time.Millisecond) // a bounded poll: a join sends the test no event
	}
	c := client(t, "-u", "-T", "1", "-p", "5005", "-n", "300000", "-l", "1000", "-b", "4m")
	var out bytes.Buffer
	if err := <-mcasttest.Go(ns, func() error { return Client(ctx, c, "239.39.5.1", &out) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Sent 300 datagrams") || !strings.Contains(out.String(), "TTL 1") {
		t.Errorf("the sender's report:\n%s", out.String())
	}
	for _, done := range []<-chan error{textDone, jsonDone} {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("a receiver did not end on the sender's FIN")
		}
	}
	if want := " 0/300 (0%)"; !strings.Contains(text.String(), want) || !strings.Contains(text.String(), "Joining multicast group 239.39.5.1") {
		t.Errorf("the text receiver's report has no %q:\n%s", want, text.String())
	}
	var r FlowReport
	if err := json.Unmarshal([]byte(js.String()), &r); err != nil {
		t.Fatalf("%v:\n%s", err, js.String())
	}
	if r.UDP.Received != 300 || r.UDP.Lost != 0 || r.Bytes != 300000 || r.EndedBy != "fin" || r.Group != "239.39.5.1:5005" {
		t.Errorf("the JSON receiver's report: %+v", r)
	}
}
