package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

// The UDP fixtures and the synthetic results they stand beside.
var udpFixtures = []struct {
	file  string
	build func() *result.Result
}{
	{"iperf3-3.12-udp.json", udpForwardResult},
	{"iperf3-3.12-udp-P2.json", udpParallelResult},
	{"iperf3-3.12-udp-R.json", udpReverseResult},
	{"iperf3-3.12-udp-bidir.json", udpBidirResult},
}

// wireperfKeys are the keys wireperf adds beside iperf3's in its layout.
var wireperfKeys = map[string]bool{
	// every interval stream and sum, and UDP end streams
	"sender_bytes": true, "sender_bits_per_second": true, "receiver_bytes": true, "receiver_bits_per_second": true,
	"sender_udp": true, "receiver_udp": true,
	// each side's own span, and the kernel's counts (docs/json.md)
	"sender_start": true, "sender_end": true, "receiver_start": true, "receiver_end": true,
	"sender_bytes_delivered": true, "receiver_app_bytes": true, "receiver_backlog_bytes": true, "tail": true,
	// UDP end streams and sums
	"received_packets": true, "duplicates": true, "late_packets": true, "reorder_max_extent": true,
	"jitter_samples": true, "jitter_method": true, "send_errors": true, "out_of_order": true,
	// test_start keys of iperf3 3.13 on
	"bidir": true, "interval": true,
}

// extraKeys lists what got has that want lacks: objects key by key,
// arrays element by element where both have the element.
func extraKeys(path string, want, got any) []string {
	var out []string
	switch g := got.(type) {
	case map[string]any:
		w, _ := want.(map[string]any)
		for k, gv := range g {
			wv, ok := w[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, extraKeys(path+"."+k, wv, gv)...)
		}
	case []any:
		w, _ := want.([]any)
		for i := 0; i < len(g) && i < len(w); i++ {
			out = append(out, extraKeys(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
	}
	sort.Strings(out)
	return out
}

// TestJSONUDPKeys checks each UDP document against iperf3's: every key
// iperf3 writes, in every stream, with its type; and nothing else but
// wireperf's documented additions (no TCP keys in a UDP test).
func TestJSONUDPKeys(t *testing.T) {
	for _, fx := range udpFixtures {
		t.Run(fx.file, func(t *testing.T) {
			iperf := readFixture(t, fx.file)
			ours := writeJSON(t, fx.build(), Options{})
			for _, part := range [][]any{{"start"}, {"intervals", 0}, {"end"}} {
				want, got := at(t, iperf, part...), at(t, ours, part...)
				if w, g := want.(map[string]any)["streams"], got.(map[string]any)["streams"]; w != nil && len(w.([]any)) != len(g.([]any)) {
					t.Fatalf("test data: %v has %d streams, iperf3's %d", part, len(g.([]any)), len(w.([]any)))
				}
				// Every stream, not only the first.
				if streams, ok := want.(map[string]any)["streams"].([]any); ok {
					for i := range streams {
						for _, p := range missingKeys(fmt.Sprint(part, i), streams[i], at(t, got, "streams", i)) {
							t.Error(p)
						}
					}
				}
				for _, p := range extraKeys(fmt.Sprint(part), want, got) {
					if k := p[strings.LastIndex(p, ".")+1:]; !wireperfKeys[k] {
						t.Errorf("%s: not an iperf3 key nor a documented addition", p)
					}
				}
			}
		})
	}
}

// float reads a decoded number.
func float(t *testing.T, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v is %s, not a number", v, jsonKind(v))
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestJSONUDPFigures(t *testing.T) {
	r := udpParallelResult()
	doc := writeJSON(t, r, Options{})
	d := r.Directions()[0]
	sent, received := directionUDP(d)
	var weighted float64
	var samples int64
	for _, f := range d.Flows {
		weighted += f.Received.UDP.JitterMs * float64(f.Received.UDP.JitterSamples)
		samples += f.Received.UDP.JitterSamples
	}
	jitter := weighted / float64(samples)
	lostPct := 100 * float64(received.Lost) / float64(received.Expected)

	ints := []struct {
		path []any
		want int64
	}{
		{[]any{"end", "sum_received", "packets"}, received.Expected},
		{[]any{"end", "sum_received", "lost_packets"}, 5000},
		{[]any{"end", "sum_received", "out_of_order"}, 18},
		{[]any{"end", "sum_received", "duplicates"}, 2},
		{[]any{"end", "sum_received", "late_packets"}, 1},
		{[]any{"end", "sum_received", "received_packets"}, received.Received},
		{[]any{"end", "sum_received", "reorder_max_extent"}, 7},
		{[]any{"end", "sum_received", "jitter_samples"}, samples},
		{[]any{"end", "sum_received", "bytes"}, d.Received.Bytes},
		{[]any{"end", "sum_sent", "packets"}, sent.Sent},
		{[]any{"end", "sum_sent", "send_errors"}, 4},
		{[]any{"end", "sum_sent", "bytes"}, d.Sent.Bytes},
		{[]any{"end", "sum_sent", "lost_packets"}, 0}, // as iperf3: the sender measures no loss
		{[]any{"end", "sum", "bytes"}, d.Sent.Bytes},  // the client sends: its own bytes
		{[]any{"end", "sum", "packets"}, sent.Sent},
		{[]any{"end", "sum", "lost_packets"}, 5000},
		{[]any{"end", "streams", 0, "udp", "packets"}, 12033},
		{[]any{"end", "streams", 0, "udp", "lost_packets"}, 3040},
		{[]any{"end", "streams", 0, "udp", "out_of_order"}, 17},
		{[]any{"end", "streams", 0, "udp", "duplicates"}, 2},
		{[]any{"end", "streams", 0, "udp", "send_errors"}, 4},
		{[]any{"end", "streams", 1, "udp", "lost_packets"}, 1960},
		{[]any{"intervals", 1, "streams", 0, "packets"}, 4011},
		{[]any{"intervals", 1, "streams", 0, "receiver_udp", "lost"}, 40},
		{[]any{"intervals", 1, "streams", 0, "receiver_udp", "reordered"}, 12},
		{[]any{"intervals", 1, "streams", 0, "sender_udp", "sent"}, 4011},
		{[]any{"intervals", 2, "sum", "packets"}, 6544},
		{[]any{"intervals", 2, "sum", "receiver_udp", "lost"}, 4950},
		{[]any{"intervals", 2, "sum", "receiver_udp", "expected"}, 6544},
		{[]any{"wireperf", "udp_loss", 0, "lost"}, 5000},
		{[]any{"wireperf", "udp_loss", 0, "receiver_rcvbuf_errors"}, 3000},
		{[]any{"wireperf", "udp_loss", 0, "network"}, 1994},
	}
	for _, tt := range ints {
		if got := number(t, at(t, doc, tt.path...)); got != tt.want {
			t.Errorf("%v = %d; want %d", tt.path, got, tt.want)
		}
	}
	floats := []struct {
		path []any
		want float64
	}{
		{[]any{"end", "sum_received", "jitter_ms"}, jitter},
		{[]any{"end", "sum_received", "lost_percent"}, lostPct},
		{[]any{"end", "sum", "jitter_ms"}, jitter},
		{[]any{"end", "sum", "lost_percent"}, lostPct},
		{[]any{"end", "sum_sent", "jitter_ms"}, 0},
		{[]any{"end", "streams", 0, "udp", "jitter_ms"}, 0.5},
		{[]any{"end", "streams", 0, "udp", "lost_percent"}, 100 * 3040.0 / 12033},
	}
	for _, tt := range floats {
		if got := float(t, at(t, doc, tt.path...)); !near(got, tt.want) {
			t.Errorf("%v = %v; want %v", tt.path, got, tt.want)
		}
	}
	bools := []struct {
		path []any
		want bool
	}{
		{[]any{"end", "sum", "sender"}, true},
		{[]any{"end", "sum_sent", "sender"}, true},
		{[]any{"end", "sum_received", "sender"}, false},
		{[]any{"end", "streams", 0, "udp", "sender"}, true},
		{[]any{"wireperf", "udp_loss", 0, "approximate"}, false},
	}
	for _, tt := range bools {
		if got := at(t, doc, tt.path...); got != tt.want {
			t.Errorf("%v = %v; want %v", tt.path, got, tt.want)
		}
	}
	if got := at(t, doc, "wireperf", "udp_loss", 0, "verdict"); got != lossOf(r, d).Verdict {
		t.Errorf("udp_loss verdict %q; want %q", got, lossOf(r, d).Verdict)
	}
	// The sending end's interval streams have iperf3's sender keys only.
	s := at(t, doc, "intervals", 0, "streams", 0).(map[string]any)
	for _, k := range []string{"jitter_ms", "lost_packets", "lost_percent", "retransmits"} {
		if _, has := s[k]; has {
			t.Errorf("sending end's interval stream has %q: %v", k, s)
		}
	}
	for _, k := range []string{"sender_tcp_congestion", "receiver_tcp_congestion"} {
		if _, has := at(t, doc, "end").(map[string]any)[k]; has {
			t.Errorf("UDP end has %q", k)
		}
	}
	if _, has := at(t, doc, "start").(map[string]any)["tcp_mss_default"]; has {
		t.Error("UDP start has tcp_mss_default")
	}
	if got := float(t, at(t, doc, "start", "test_start", "target_bitrate")); got != 10e6 {
		t.Errorf("target_bitrate %v; want 1e7", got)
	}
}

// TestJSONUDPReceivingEnd covers -R and --bidir, where the local end
// (the client) receives: its interval streams carry jitter and loss.
func TestJSONUDPReceivingEnd(t *testing.T) {
	r := udpReverseResult()
	doc := writeJSON(t, r, Options{})
	row := r.IntervalRows()[1]
	u := row.Flows[0].Received.UDP
	s := at(t, doc, "intervals", 1, "streams", 0)
	if number(t, at(t, s, "packets")) != u.Expected || number(t, at(t, s, "lost_packets")) != u.Lost ||
		!near(float(t, at(t, s, "jitter_ms")), u.JitterMs) || !near(float(t, at(t, s, "lost_percent")), u.LostPercent()) ||
		at(t, s, "sender") != false {
		t.Errorf("receiving interval stream %v; want packets %d, lost %d, jitter %v, sender false", s, u.Expected, u.Lost, u.JitterMs)
	}
	d := r.Directions()[0]
	if number(t, at(t, doc, "end", "sum", "bytes")) != d.Received.Bytes || at(t, doc, "end", "sum", "sender") != false ||
		at(t, doc, "end", "sum_sent", "sender") != true || at(t, doc, "end", "streams", 0, "udp", "sender") != false {
		t.Errorf("reverse end %v", at(t, doc, "end"))
	}

	// --bidir: the server→client receiver has no jitter: 0 with 0 samples.
	r = udpBidirResult()
	doc = writeJSON(t, r, Options{})
	back := r.Directions()[1]
	_, received := directionUDP(back)
	for _, k := range []string{"sum_received_bidir_reverse", "sum_bidir_reverse"} {
		if number(t, at(t, doc, "end", k, "lost_packets")) != received.Lost || float(t, at(t, doc, "end", k, "jitter_ms")) != 0 {
			t.Errorf("end.%s = %v; want lost %d, jitter 0", k, at(t, doc, "end", k), received.Lost)
		}
	}
	if number(t, at(t, doc, "end", "sum_received_bidir_reverse", "jitter_samples")) != 0 {
		t.Error("jitter_samples of a receiver without jitter not 0")
	}
	if number(t, at(t, doc, "end", "sum_sent_bidir_reverse", "packets")) != back.Flows[0].Sent.UDP.Sent {
		t.Errorf("sum_sent_bidir_reverse %v", at(t, doc, "end", "sum_sent_bidir_reverse"))
	}
	if at(t, doc, "intervals", 0, "sum_bidir_reverse", "sender") != false || number(t, at(t, doc, "intervals", 0, "sum_bidir_reverse", "lost_packets")) != 5 {
		t.Errorf("intervals[0].sum_bidir_reverse %v", at(t, doc, "intervals", 0, "sum_bidir_reverse"))
	}
	loss := at(t, doc, "wireperf", "udp_loss").([]any)
	if len(loss) != 2 || at(t, loss[0], "sender_role") != "client" || number(t, at(t, loss[0], "receiver_rcvbuf_errors")) != 120 ||
		at(t, loss[1], "sender_role") != "server" || number(t, at(t, loss[1], "network")) != 5 {
		t.Errorf("udp_loss %v", loss)
	}
}

func TestJSONUDPNaN(t *testing.T) {
	r := udpParallelResult()
	r.Remote.Streams[0].UDP.JitterMs = math.NaN()
	r.Remote.Streams[0].UDP.PDV.P99 = math.Inf(1)
	r.Remote.Intervals[0].Streams[0].UDP.JitterMs = math.Inf(-1)
	r.Local.Streams[0].UDP.Spacing.MeanNs = math.NaN()
	doc := writeJSON(t, r, Options{})
	tests := []struct {
		path []any
		want any
	}{
		{[]any{"end", "streams", 0, "udp", "jitter_ms"}, json.Number("0")},
		{[]any{"wireperf", "result", "remote", "streams", 0, "udp", "jitter_ms"}, json.Number("0")},
		{[]any{"wireperf", "result", "remote", "streams", 0, "udp", "pdv_us", "p99"}, json.Number("0")},
		{[]any{"wireperf", "result", "remote", "intervals", 0, "streams", 0, "udp", "jitter_ms"}, json.Number("0")},
		{[]any{"wireperf", "result", "local", "streams", 0, "udp", "spacing", "mean_ns"}, json.Number("0")},
		{[]any{"intervals", 0, "streams", 0, "receiver_udp", "jitter_ms"}, json.Number("0")},
	}
	for _, tt := range tests {
		if got := at(t, doc, tt.path...); got != tt.want {
			t.Errorf("%v = %v; want %v", tt.path, got, tt.want)
		}
	}
	if !math.IsNaN(r.Remote.Streams[0].UDP.JitterMs) || !math.IsInf(r.Remote.Intervals[0].Streams[0].UDP.JitterMs, -1) {
		t.Error("writing the JSON changed the Result")
	}
}

func TestJSONStreamUDP(t *testing.T) {
	for _, fx := range udpFixtures {
		t.Run(fx.file, func(t *testing.T) {
			r := fx.build()
			var b bytes.Buffer
			if err := Replay(&JSONStream{W: &b}, r); err != nil {
				t.Fatal(err)
			}
			doc := writeJSON(t, r, Options{})
			iperf := readFixture(t, fx.file)
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			var intervals int
			for _, line := range lines {
				ev := decodeJSON(t, []byte(line))
				switch ev["event"] {
				case "start":
					for _, p := range missingKeys("start", at(t, iperf, "start"), ev["data"]) {
						t.Error(p)
					}
				case "interval":
					if !reflect.DeepEqual(ev["data"], at(t, doc, "intervals", intervals)) {
						t.Errorf("interval event %d differs from the document's interval", intervals)
					}
					if intervals == 0 {
						for _, p := range missingKeys("interval", at(t, iperf, "intervals", 0), ev["data"]) {
							t.Error(p)
						}
					}
					intervals++
				case "end":
					if !reflect.DeepEqual(ev["data"], doc["end"]) {
						t.Errorf("end event differs from the document's end")
					}
				case "wireperf":
					if !reflect.DeepEqual(ev["data"], doc["wireperf"]) {
						t.Errorf("wireperf event differs from the document's")
					}
				}
			}
			if intervals != intervalsN {
				t.Errorf("%d interval events; want %d", intervals, intervalsN)
			}
		})
	}
}
