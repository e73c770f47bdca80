package resultjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/spec"
	"github.com/wireperf/wireperf/internal/udpmon"
)

// sampleResult is a 2-second TCP test with a TCP_INFO timeline.
func sampleResult() *result.Result {
	s := spec.Spec{Protocol: spec.TCP, Streams: 1, Duration: 2 * time.Second, Interval: time.Second, Length: 131072}
	tl := &result.TCPTimeline{Period: 0.5}
	for i := 0; i <= 4; i++ {
		tl.Samples = append(tl.Samples, result.TCPSample{T: float64(i) / 2, RTTus: uint32(40000 + 1000*i), SndMSS: 1448, SndCwnd: uint32(100 + 10*i), TotalRetrans: uint32(i)})
	}
	iv := func(i int, sender bool, bytes int64) result.Interval {
		return result.Interval{Index: i, Start: float64(i), End: float64(i + 1),
			Streams: []result.StreamInterval{{ID: 1, Sender: sender, Bytes: bytes}}}
	}
	return &result.Result{
		Spec:      s,
		StartedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Local: result.End{Role: result.RoleClient, Host: result.Host{Hostname: "alpha", Version: "v1.0.0"},
			Streams:   []result.Stream{{ID: 1, Sender: true, Start: 0, End: 2, Bytes: 250e6, TCPTimeline: tl}},
			Intervals: []result.Interval{iv(0, true, 125e6), iv(1, true, 125e6)}},
		Remote: result.End{Role: result.RoleServer, Host: result.Host{Hostname: "beta"},
			Streams:   []result.Stream{{ID: 1, Sender: false, Start: 0, End: 2, Bytes: 249e6}},
			Intervals: []result.Interval{iv(0, false, 124e6), iv(1, false, 125e6)}},
	}
}

// normal is r as JSON gives it back, for comparison.
func normal(t *testing.T, r *result.Result) *result.Result {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out result.Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func TestReadsEveryForm(t *testing.T) {
	r := sampleResult()
	var doc, stream, rr bytes.Buffer
	if err := (&emit.JSON{W: &doc}).Write(r); err != nil {
		t.Fatal(err)
	}
	js := &emit.JSONStream{W: &stream}
	if err := js.Header(emit.Header{Spec: r.Spec}); err != nil {
		t.Fatal(err)
	}
	for _, row := range r.IntervalRows() {
		if err := js.Interval(r, row); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.Summary(r); err != nil {
		t.Fatal(err)
	}
	// --json-stream-full-output: the same lines, then -J's document.
	var full bytes.Buffer
	if err := emit.Replay(&emit.JSONStream{W: &full, Full: true}, r); err != nil {
		t.Fatal(err)
	}
	if err := (&emit.RRJSON{W: &rr}).Write(r); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		data []byte
		kind string
	}{"-J": {doc.Bytes(), KindTest}, "--json-stream": {stream.Bytes(), KindTest},
		"--json-stream-full-output": {full.Bytes(), KindTest}, "rr -J": {rr.Bytes(), KindRR}} {
		d, err := Read(bytes.NewReader(c.data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Kind != c.kind {
			t.Errorf("%s: kind %q, want %q", name, d.Kind, c.kind)
		}
		if !reflect.DeepEqual(d.Result, normal(t, r)) {
			t.Errorf("%s: the result read back differs from the one written", name)
		}
	}
}

func TestReadsUDPMon(t *testing.T) {
	sw := &udpmon.Sweep{Server: "beta:5201", Count: 1000, Points: []udpmon.Point{{Size: 1472, Spacing: 10 * time.Microsecond, RecvWireBps: 1.2e9, LossPercent: 0.5}}}
	var buf bytes.Buffer
	if err := (&emit.UDPMonJSON{W: &buf}).Write(sw); err != nil {
		t.Fatal(err)
	}
	d, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != KindUDPMon || d.Sweep == nil || !reflect.DeepEqual(d.Sweep.Points, sw.Points) {
		t.Fatalf("udpmon read back as %+v", d)
	}
}

func TestRejectsOthers(t *testing.T) {
	for name, in := range map[string]string{
		"empty":          "",
		"not JSON":       "hello",
		"iperf3's own":   `{"start":{"version":"iperf 3.12"},"intervals":[],"end":{}}`,
		"two documents":  `{"kind":"rr","result":{}} {"kind":"rr","result":{}}`,
		"unknown kind":   `{"kind":"table"}`,
		"no result":      `{"kind":"rr"}`,
		"stream, no end": `{"event":"start","data":{}}` + "\n",
		"no keys":        `{"x":1}`,
	} {
		_, err := Read(strings.NewReader(in))
		if err == nil {
			t.Errorf("%s: read without error", name)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error is not one line: %q", name, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	var doc bytes.Buffer
	if err := (&emit.JSON{W: &doc}).Write(sampleResult()); err != nil {
		f.Fatal(err)
	}
	f.Add(doc.Bytes())
	f.Add([]byte(`{"kind":"rr","result":{"spec":{}}}`))
	f.Add([]byte(`{"kind":"udpmon","sweep":{"points":[{}]}}`))
	f.Add([]byte(`{"event":"wireperf","data":{"result":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Read(bytes.NewReader(data))
		if err == nil && d.Result == nil && d.Sweep == nil {
			t.Fatal("no error and nothing read")
		}
	})
}
