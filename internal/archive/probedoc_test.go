package archive

import (
	"context"
	"testing"
	"time"
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
	if s.ProbeP50us == nil || *s.ProbeP50us != rtt["p50"].(float64) || s.ProbeP99us == nil || *s.ProbeP99us != rtt["p99"].(float64) {
		t.Errorf("RTT p50 %v p99 %v, the document's %v and %v", s.ProbeP50us, s.ProbeP99us, rtt["p50"], rtt["p99"])
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
	if s.ProbeP50us == nil || *s.ProbeP50us != ct["p50"].(float64) || s.ProbeP99us == nil || *s.ProbeP99us != ct["p99"].(float64) {
		t.Errorf("handshake p50 %v p99 %v, the document's %v and %v", s.ProbeP50us, s.ProbeP99us, ct["p50"], ct["p99"])
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
	if s.ProbeP50us != nil || s.ProbeP99us != nil || s.MeanRTTms != nil {
		t.Errorf("times of a run that never connected: p50 %v p99 %v mean %v", s.ProbeP50us, s.ProbeP99us, s.MeanRTTms)
	}
	if s.Figures[FigureConnectRefused] != path(m, "tcp_connect", "refused").(float64) || s.Figures[FigureConnectTimedOut] != 0 {
		t.Errorf("figures %v, the document's refused %v", s.Figures, path(m, "tcp_connect", "refused"))
	}
}

// A probe run stored in the archive is read back with its figures and
// tabulated like any run: `wireperf table --rows proto --value probe_p99_us`.
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
					t.Errorf("%s: a probe's p99 in rr's column", file)
				}
				if p.Summary.ProbeP99us != nil {
					want[p.Axes["proto"].Label] = *p.Summary.ProbeP99us
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
			tab, skipped, err := Pivot(runs, "proto", "", "probe_p99_us", StatMax)
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

// Probe runs stored before migration 10, their percentiles in rr's
// columns as wireperf stored them then, keep them in the probes' own
// columns after it; an rr run's stay where they were.
func TestProbePercentilesMigrated(t *testing.T) {
	// Not parallel: openAtSchema stops every opening's migrations.
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := openAtSchema(t, dsn, 9)
			at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			if err := s.ensureRunPartition(ctx, at); err != nil {
				t.Fatal(err)
			}
			old := []struct {
				id, figure string
				p50, p99   float64
			}{
				{"ping-old", FigurePingDuplicates, 120, 480},
				{"connect-old", FigureConnectRefused, 90, 310},
				{"rr-old", "", 30, 80},
			}
			for _, r := range old {
				if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO run (id, state, source, recorded) VALUES (?, ?, ?, ?)`),
					r.id, StateFinished, SourceNative, at); err != nil {
					t.Fatal(err)
				}
				if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO run_summary (run_id, rr_p50_us, rr_p99_us, lost_percent) VALUES (?, ?, ?, ?)`),
					r.id, r.p50, r.p99, 0.0); err != nil {
					t.Fatal(err)
				}
				if r.figure != "" {
					if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO run_figure (run_id, name, value) VALUES (?, ?, ?)`), r.id, r.figure, 0.0); err != nil {
						t.Fatal(err)
					}
				}
			}
			s.Close()

			s = open(t, dsn)
			for _, r := range old {
				got, err := s.Get(ctx, r.id)
				if err != nil {
					t.Fatal(err)
				}
				m := got.Summary
				probe, rr := [2]*float64{m.ProbeP50us, m.ProbeP99us}, [2]*float64{m.RRp50us, m.RRp99us}
				moved, stayed := probe, rr
				if r.figure == "" {
					moved, stayed = rr, probe
				}
				if moved[0] == nil || *moved[0] != r.p50 || moved[1] == nil || *moved[1] != r.p99 || stayed[0] != nil || stayed[1] != nil {
					t.Errorf("%s after the migration: probe %v %v, rr %v %v; want p50 %v and p99 %v in the %s columns only",
						r.id, m.ProbeP50us, m.ProbeP99us, m.RRp50us, m.RRp99us, r.p50, r.p99, map[bool]string{true: "rr", false: "probe"}[r.figure == ""])
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
