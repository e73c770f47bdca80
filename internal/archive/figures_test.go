package archive

import (
	"context"
	"testing"
)

// The figures beside the summary come from the document: each end's
// process CPU as iperf3's cpu_utilization_percent gives it, and the
// socket buffers each end's streams were granted.
func TestParseFiguresTCP(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "tcp-p2.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	cpu := path(m, "end", "cpu_utilization_percent").(map[string]any)
	for name, key := range map[string]string{
		FigureCPULocalUser: "host_user", FigureCPULocalSystem: "host_system", FigureCPULocalTotal: "host_total",
		FigureCPURemoteUser: "remote_user", FigureCPURemoteSystem: "remote_system", FigureCPURemoteTotal: "remote_total",
	} {
		if got, ok := p.Summary.Figures[name]; !ok || got != cpu[key].(float64) {
			t.Errorf("%s = %v (%v), the document's %s %v", name, got, ok, key, cpu[key])
		}
	}
	sock := path(m, "wireperf", "result", "local").(map[string]any)["streams"].([]any)[0].(map[string]any)["socket"].(map[string]any)
	if got := p.Summary.Figures[FigureSndbufGranted]; got != sock["sndbuf_granted"].(float64) {
		t.Errorf("send buffer granted %v, the sending stream's %v", got, sock["sndbuf_granted"])
	}
	if got := p.Summary.Figures[FigureRcvbufGranted]; got != sock["rcvbuf_granted"].(float64) {
		t.Errorf("receive buffer granted %v, the receiving stream's %v", got, sock["rcvbuf_granted"])
	}
	vals := p.Summary.Values()
	if vals[FigureCPURemoteSystem] != cpu["remote_system"].(float64) {
		t.Errorf("Values() lacks the figures: %v", vals)
	}
}

// iperf3 writes a remote CPU of zeros when the server sent no results:
// that is no figure, not 0%.
func TestParseFiguresRemoteCPUUnknown(t *testing.T) {
	t.Parallel()
	p, err := ParseDocument([]byte(`{"start": {}, "end": {"sum_sent": {"seconds": 1, "bytes": 10, "bits_per_second": 80},
		"cpu_utilization_percent": {"host_total": 3.5, "host_user": 1, "host_system": 2.5, "remote_total": 0, "remote_user": 0, "remote_system": 0}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Figures[FigureCPULocalTotal] != 3.5 || p.Summary.Figures[FigureCPULocalSystem] != 2.5 {
		t.Errorf("local CPU %v", p.Summary.Figures)
	}
	if _, ok := p.Summary.Figures[FigureCPURemoteTotal]; ok {
		t.Errorf("a remote CPU of zeros kept as a figure: %v", p.Summary.Figures)
	}
}

func TestParseFiguresRRAndUDPMon(t *testing.T) {
	t.Parallel()
	b, m := readDoc(t, "rr-udp.json")
	p, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Summary.Figures[FigureCPURemoteTotal], path(m, "result", "remote", "cpu", "total_percent").(float64); got != want {
		t.Errorf("rr remote CPU %v, the document's %v", got, want)
	}
	// Two points: the mean gap weighted by the datagrams each sent, and
	// the worst point's p99.
	doc := `{"kind": "udpmon", "sweep": {"server": "h", "started_at": "2026-12-04T05:00:00Z", "points": [
		{"sent": 1000, "lost": 0, "achieved_spacing_ns": 10000, "achieved_spacing_p99_ns": 30000},
		{"sent": 3000, "lost": 0, "achieved_spacing_ns": 2000, "achieved_spacing_p99_ns": 9000}]}}`
	if p, err = ParseDocument([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if got := p.Summary.Figures[FigureSpacingAchieved]; got != 4 { // (1000×10 + 3000×2) / 4000 µs
		t.Errorf("mean achieved gap %v µs, want 4", got)
	}
	if got := p.Summary.Figures[FigureSpacingAchievedP99]; got != 30 {
		t.Errorf("p99 achieved gap %v µs, want 30", got)
	}
}

// The figures are stored and listed with the run, and pivot like any
// summary value; a run stored without them is skipped.
func TestFiguresStoredAndPivoted(t *testing.T) {
	t.Parallel()
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, dsn)
			with := sampleRun("a1", "", 0)
			with.Summary.Figures = map[string]float64{FigureCPULocalTotal: 42.5, FigureCPURemoteTotal: 17.25, FigureSndbufGranted: 425984}
			without := sampleRun("a2", "", 1)
			for _, r := range []*Run{with, without} {
				if err := s.PutRun(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Get(ctx, "a1")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Summary.Figures) != 3 || got.Summary.Figures[FigureCPURemoteTotal] != 17.25 || got.Summary.Figures[FigureSndbufGranted] != 425984 {
				t.Errorf("figures read back %v", got.Summary.Figures)
			}
			runs, err := s.List(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			tab, skipped, err := Pivot(runs, "window", "parallel", FigureCPULocalTotal, StatMean)
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := tab.Cell(0, 0); !ok || c.Value != 42.5 || c.N != 1 || skipped != 1 {
				t.Errorf("cell %+v, skipped %d; want 42.5 over the one run that has it", c, skipped)
			}
		})
	}
}

// Each end's whole host over the run, from its host counters' samples:
// CPU busy weighted by the span each sample covers, the busiest sample,
// and the most memory in use. An end without samples has none.
func TestParseFiguresHostCounters(t *testing.T) {
	t.Parallel()
	p, err := ParseDocument([]byte(`{"start": {}, "end": {"sum_sent": {"seconds": 4, "bytes": 10, "bits_per_second": 20}},
		"wireperf": {"result": {
			"local": {"role": "client", "host": {"hostname": "a"}, "host_counters": {"seconds": 4, "samples": [
				{"t": 1, "user": 10, "system": 20, "softirq": 0, "mem_used_bytes": 1000},
				{"t": 4, "user": 1, "system": 1, "softirq": 2, "mem_used_bytes": 3000}]}},
			"remote": {"role": "server", "host": {"hostname": "b"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	f := p.Summary.Figures
	// 30% over the first second, 4% over the next three.
	if got, want := f[FigureHostCPULocalMean], (30*1+4*3)/4.0; got != want {
		t.Errorf("local host CPU mean %v, want %v", got, want)
	}
	if f[FigureHostCPULocalMax] != 30 || f[FigureHostMemLocalPeak] != 3000 {
		t.Errorf("local host CPU max %v, memory peak %v; want 30 and 3000", f[FigureHostCPULocalMax], f[FigureHostMemLocalPeak])
	}
	for _, name := range []string{FigureHostCPURemoteMean, FigureHostCPURemoteMax, FigureHostMemRemotePeak} {
		if v, ok := f[name]; ok {
			t.Errorf("%s = %v for an end without samples", name, v)
		}
	}
	if p.Summary.Values()[FigureHostCPULocalMean] != f[FigureHostCPULocalMean] {
		t.Error("Values() lacks the host figures")
	}
}
