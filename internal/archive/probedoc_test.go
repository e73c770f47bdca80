package archive

import (
	"context"
	"testing"
)

// The probes' documents in testdata were written by the commands
// themselves on loopback: `wireperf ping 127.0.0.1 --raw --count 20
// --interval 10ms --size 100 -J`, and `wireperf tcp-connect -J` to a
// listening port and to port 1, where nothing listens.

// A ping run's figures are the document's: its RTT percentiles, min and
// mean, its loss, duplicates and TTL changes, and its size and protocol
// as axes.
func TestParsePingDocument(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "ping-loopback.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	rtt := path(m, "ping", "rtt_us").(map[string]any)
	s := p.Summary
	if s.RRp50us == nil || *s.RRp50us != rtt["p50"].(float64) || s.RRp99us == nil || *s.RRp99us != rtt["p99"].(float64) {
		t.Errorf("RTT p50 %v p99 %v, the document's %v and %v", s.RRp50us, s.RRp99us, rtt["p50"], rtt["p99"])
	}
	if s.MinRTTms == nil || *s.MinRTTms != rtt["min"].(float64)/1000 || s.MeanRTTms == nil || *s.MeanRTTms != rtt["mean"].(float64)/1000 {
		t.Errorf("RTT min %v mean %v ms, the document's %v and %v µs", s.MinRTTms, s.MeanRTTms, rtt["min"], rtt["mean"])
	}
	if s.LostPercent == nil || *s.LostPercent != path(m, "ping", "loss_percent").(float64) {
		t.Errorf("loss %v, the document's %v", s.LostPercent, path(m, "ping", "loss_percent"))
	}
	if s.Figures[FigureProbeP90us] != rtt["p90"].(float64) || s.Figures[FigureProbeMaxUs] != rtt["max"].(float64) {
		t.Errorf("figures %v, the document's p90 %v max %v", s.Figures, rtt["p90"], rtt["max"])
	}
	if v, ok := s.Figures[FigurePingDuplicates]; !ok || v != path(m, "ping", "duplicates").(float64) {
		t.Errorf("duplicates %v (%v), the document's %v", v, ok, path(m, "ping", "duplicates"))
	}
	if a := p.Axes["length"]; a.Num == nil || *a.Num != path(m, "ping", "size").(float64) || p.Axes["proto"].Label != "icmp" {
		t.Errorf("axes %v", p.Axes)
	}
	if p.RemoteHost != path(m, "ping", "target") || p.Started.IsZero() || !p.Ended.After(p.Started) || s.Seconds == nil {
		t.Errorf("host %q, started %v, ended %v, seconds %v", p.RemoteHost, p.Started, p.Ended, s.Seconds)
	}
}

// A tcp-connect run's handshake times stand where ping's RTTs do; the
// attempts that did not connect are its loss, each outcome counted.
func TestParseTCPConnectDocument(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "tcp-connect-loopback.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	ct := path(m, "tcp_connect", "connect_us").(map[string]any)
	s := p.Summary
	if s.RRp50us == nil || *s.RRp50us != ct["p50"].(float64) || s.RRp99us == nil || *s.RRp99us != ct["p99"].(float64) {
		t.Errorf("handshake p50 %v p99 %v, the document's %v and %v", s.RRp50us, s.RRp99us, ct["p50"], ct["p99"])
	}
	if s.LostPercent == nil || *s.LostPercent != 0 || p.Axes["proto"].Label != "tcp" {
		t.Errorf("loss %v, axes %v; want 0 and tcp", s.LostPercent, p.Axes)
	}

	// Every attempt refused: all lost, no time at all (the document's
	// zeros are no measurement), the refusals counted.
	b, m = readDoc(t, "tcp-connect-refused.json")
	if p, err = ParseDocument(b); err != nil {
		t.Fatal(err)
	}
	s = p.Summary
	attempts := path(m, "tcp_connect", "attempts").(float64)
	if s.LostPercent == nil || *s.LostPercent != 100 || attempts == 0 {
		t.Errorf("loss %v over %v attempts, every one refused", s.LostPercent, attempts)
	}
	if s.RRp50us != nil || s.RRp99us != nil || s.MeanRTTms != nil {
		t.Errorf("times of a run that never connected: p50 %v p99 %v mean %v", s.RRp50us, s.RRp99us, s.MeanRTTms)
	}
	if s.Figures[FigureConnectRefused] != path(m, "tcp_connect", "refused").(float64) || s.Figures[FigureConnectTimedOut] != 0 {
		t.Errorf("figures %v, the document's refused %v", s.Figures, path(m, "tcp_connect", "refused"))
	}
}

// A probe run stored in the archive is read back with its figures and
// tabulated like any run: `wireperf table --rows proto --value rr_p99_us`.
func TestProbeRunsStoredAndPivoted(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			want := map[string]float64{}
			for i, file := range []string{"ping-loopback.json", "tcp-connect-loopback.json", "tcp-connect-refused.json"} {
				b, _ := readDoc(t, file)
				p, err := ParseDocument(b)
				if err != nil {
					t.Fatal(err)
				}
				r := &Run{ID: file, State: StateFinished, Source: SourceNative, Seq: i, Cmdline: file, LocalHost: "a", RemoteHost: p.RemoteHost,
					Started: p.Started, Ended: p.Ended, Document: b, DocumentFormat: FormatJSON, Summary: p.Summary, Axes: p.Axes}
				if err := s.PutRun(ctx, r); err != nil {
					t.Fatal(err)
				}
				if p.Summary.RRp99us != nil {
					want[p.Axes["proto"].Label] = *p.Summary.RRp99us
				}
			}
			got, err := s.Get(ctx, "tcp-connect-refused.json")
			if err != nil {
				t.Fatal(err)
			}
			if got.Summary.Figures[FigureConnectRefused] == 0 || got.Summary.LostPercent == nil || *got.Summary.LostPercent != 100 {
				t.Errorf("refused run read back: figures %v, loss %v", got.Summary.Figures, got.Summary.LostPercent)
			}
			runs, err := s.List(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			tab, skipped, err := Pivot(runs, "proto", "", "rr_p99_us", StatMax)
			if err != nil {
				t.Fatal(err)
			}
			if skipped != 1 || len(tab.Rows) != 2 {
				t.Fatalf("rows %v, skipped %d; want icmp and tcp, the refused run skipped", tab.Rows, skipped)
			}
			for i, row := range tab.Rows {
				if c, ok := tab.Cell(i, 0); !ok || c.Value != want[row.Label] {
					t.Errorf("%s: cell %+v, want the document's p99 %v", row.Label, c, want[row.Label])
				}
			}
		})
	}
}

// A document whose counts contradict each other gives a loss between 0
// and 100%, whatever it claims.
func TestProbeLossHeldToAShare(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]float64{
		`{"ping": {"sent": 2, "received": 5}}`:                        0,
		`{"ping": {"sent": 2, "received": 1, "loss_percent": 1e300}}`: 100,
		`{"ping": {"sent": 4, "received": 1}}`:                        75,
		`{"tcp_connect": {"attempts": 1, "connected": 9}}`:            0,
	} {
		p, err := ParseDocument([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if p.Summary.LostPercent == nil || *p.Summary.LostPercent != want {
			t.Errorf("%s: loss %v, want %v", doc, p.Summary.LostPercent, want)
		}
	}
}
