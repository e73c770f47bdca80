package archive

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/result"
)

func readDoc(t *testing.T, name string) ([]byte, map[string]any) {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return b, m
}

func path(m any, keys ...string) any {
	for _, k := range keys {
		m = m.(map[string]any)[k]
	}
	return m
}

func TestParseTCPDocument(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "tcp-p2.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Summary
	if s.ReceivedBps == nil || *s.ReceivedBps != path(m, "end", "sum_received", "bits_per_second").(float64) {
		t.Errorf("received bps %v", s.ReceivedBps)
	}
	if s.SentBps == nil || *s.SentBps != path(m, "end", "sum_sent", "bits_per_second").(float64) {
		t.Errorf("sent bps %v", s.SentBps)
	}
	if s.Retransmits == nil || float64(*s.Retransmits) != path(m, "end", "sum_sent", "retransmits").(float64) {
		t.Errorf("retransmits %v", s.Retransmits)
	}
	if s.MinRTTms == nil || s.MeanRTTms == nil || *s.MinRTTms > *s.MeanRTTms || *s.MinRTTms <= 0 {
		t.Errorf("RTT min %v mean %v", s.MinRTTms, s.MeanRTTms)
	}
	if s.JitterMs != nil || s.LostPercent != nil {
		t.Errorf("a TCP test has no jitter or loss: %v %v", s.JitterMs, s.LostPercent)
	}
	ivs := m["intervals"].([]any)
	if want := len(ivs) * 3; len(p.Intervals) != want { // two streams and the sum
		t.Errorf("%d interval rows, want %d", len(p.Intervals), want)
	}
	if !p.Wireperf || len(p.Limits) != 2 || p.LocalKernel == "" || p.Started.IsZero() || !p.Ended.After(p.Started) {
		t.Errorf("provenance: %+v", p)
	}
	if a := p.Axes["parallel"]; a.Num == nil || *a.Num != 2 {
		t.Errorf("parallel axis %+v", a)
	}
}

func TestParseUDPDocument(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "udp.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Summary
	if s.LostPercent == nil || *s.LostPercent != path(m, "end", "sum_received", "lost_percent").(float64) {
		t.Errorf("lost %v", s.LostPercent)
	}
	if s.JitterMs == nil || *s.JitterMs != path(m, "end", "sum_received", "jitter_ms").(float64) {
		t.Errorf("jitter %v", s.JitterMs)
	}
	if p.Axes["proto"].Label != "udp" {
		t.Errorf("proto axis %+v", p.Axes["proto"])
	}
}

func TestParseRRDocument(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "rr-udp.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	pt := path(m, "result", "local", "rr").(map[string]any)["points"].([]any)[0]
	rtt := pt.(map[string]any)["rtt_us"].(map[string]any)
	s := p.Summary
	if s.RRp50us == nil || *s.RRp50us != rtt["p50"].(float64) || *s.RRp99us != rtt["p99"].(float64) || *s.MinRTTms != rtt["min"].(float64)/1000 {
		t.Errorf("rr summary %+v", s.Values())
	}
	if !p.Wireperf || p.Started.IsZero() || len(p.Limits) != 2 || *p.Axes["length"].Num != 64 || s.LostPercent == nil {
		t.Errorf("rr document: %+v", p)
	}
}

// TestStoredLimitsCarryTheQdisc: the limits each end wrote (the interface
// its test ran over and that interface's root qdisc among them) reach the
// archive's host_limits as written, beside the MTU the streams add.
func TestStoredLimitsCarryTheQdisc(t *testing.T) {
	t.Parallel()
	_, m := readDoc(t, "tcp-p2.json")
	ends := path(m, "wireperf", "result").(map[string]any)
	written := map[string]result.Limits{
		"local":  {RmemMax: 4 << 20, Congestion: "bbr", DefaultQdisc: "fq_codel", Interface: "eth0", Qdisc: "tbf"},
		"remote": {RmemMax: 8 << 20, Congestion: "cubic", DefaultQdisc: "fq_codel", Interface: "ens5", Qdisc: "mq"},
	}
	for host, l := range written {
		ends[host].(map[string]any)["limits"] = l
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t, dsn)
			run := sampleRun("5c3e9a01d2b4f678", "", 0)
			run.Document, run.Limits = b, p.Limits
			if err := s.PutRun(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(context.Background(), run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Limits) != len(written) {
				t.Fatalf("stored limits %+v; want both ends", got.Limits)
			}
			for _, hl := range got.Limits {
				var stored map[string]any
				if err := json.Unmarshal([]byte(hl.Limits), &stored); err != nil {
					t.Fatal(err)
				}
				w := written[hl.Host]
				if stored["qdisc"] != w.Qdisc || stored["interface"] != w.Interface || stored["default_qdisc"] != w.DefaultQdisc {
					t.Errorf("%s: stored limits %s; want qdisc %s on %s beside default_qdisc %s", hl.Host, hl.Limits, w.Qdisc, w.Interface, w.DefaultQdisc)
				}
			}
		})
	}
}

func TestParseNotADocument(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "[1,2]", `{"a":1}`, "hello", `{"start":`, `{"kind":"rr"}`} {
		if _, err := ParseDocument([]byte(in)); !errors.Is(err, ErrNotDocument) {
			t.Errorf("ParseDocument(%q) = %v", in, err)
		}
	}
}

func FuzzParseDocument(f *testing.F) {
	for _, n := range []string{"tcp-p2.json", "udp.json", "rr-udp.json", "ping-loopback.json", "tcp-connect-loopback.json", "tcp-connect-refused.json"} {
		b, _ := os.ReadFile("testdata/" + n)
		f.Add(b)
	}
	f.Add([]byte(`{"start":{},"end":{"sum_sent":{"bits_per_second":1e400}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseDocument(b) // must not panic
	})
}

// A UDPmon sweep's document (wireperf udpmon -J) is a report the archive
// reads: its time, server, and the loss over every point; a sweep none
// of whose points ran is an error.
func TestParseUDPMonSweep(t *testing.T) {
	t.Parallel()
	doc := `{"kind": "udpmon", "sweep": {"server": "10.0.0.2", "started_at": "2026-12-04T05:00:00Z", "count": 1000,
		"seconds": 14.5, "failed": 1, "points": [
		{"size": 64, "spacing_ns": 1000000, "count": 1000, "sent": 1000, "received": 990, "lost": 10},
		{"size": 64, "spacing_ns": 0, "count": 1000, "sent": 1000, "received": 1000, "lost": 0},
		{"size": 1472, "spacing_ns": 0, "count": 1000, "error": "point timed out"}]}}`
	p, err := ParseDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if p.Error != "" || p.RemoteHost != "10.0.0.2" || !p.Started.Equal(time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)) ||
		p.Summary.Seconds == nil || *p.Summary.Seconds != 14.5 || p.Summary.LostPercent == nil || *p.Summary.LostPercent != 0.5 {
		t.Fatalf("%+v", p)
	}
	p, err = ParseDocument([]byte(`{"kind": "udpmon", "sweep": {"failed": 2, "points": [{"error": "x"}, {"error": "y"}]}}`))
	if err != nil || p.Error != "udpmon: 2 of 2 points failed" {
		t.Fatalf("%+v %v", p, err)
	}
}

// Bytes received at one instant (a burst read at once) have no rate: the
// summary leaves it out rather than store 0 bit/s.
func TestBurstReceivedAtOnceHasNoRate(t *testing.T) {
	t.Parallel()
	p, err := ParseDocument([]byte(`{"start": {}, "end": {"sum_sent": {"seconds": 0.0003, "bytes": 441600, "bits_per_second": 1.2e10},
		"sum_received": {"seconds": 0, "bytes": 441600, "bits_per_second": 0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.ReceivedBps != nil || p.Summary.ReceivedBytes == nil || *p.Summary.ReceivedBytes != 441600 {
		t.Fatalf("received %v bit/s, %v bytes", p.Summary.ReceivedBps, p.Summary.ReceivedBytes)
	}
}
