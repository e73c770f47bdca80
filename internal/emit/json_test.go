package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
	"github.com/wireperf/wireperf/internal/testutil/jsondoc"
)

// The document helpers are shared with the iperf3 tests.
var (
	decodeJSON  = jsondoc.Decode
	jsonKind    = jsondoc.Kind
	missingKeys = jsondoc.MissingKeys
	at          = jsondoc.At
	number      = jsondoc.Int
)

func writeJSON(t *testing.T, r *result.Result, opt Options) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := (&JSON{W: &b, Opt: opt}).Write(r); err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, b.Bytes())
}

func readFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, data)
}

// The real iperf3 3.12 output each synthetic result stands beside.
var fixtures = []struct {
	file  string
	build func() *result.Result
}{
	{"iperf3-3.12-tcp.json", forwardResult},
	{"iperf3-3.12-tcp-P2.json", parallelResult},
	{"iperf3-3.12-tcp-R.json", reverseResult},
	{"iperf3-3.12-tcp-bidir.json", bidirResult},
	{"iperf3-3.12-udp.json", udpForwardResult},
	{"iperf3-3.12-udp-P2.json", udpParallelResult},
	{"iperf3-3.12-udp-R.json", udpReverseResult},
	{"iperf3-3.12-udp-bidir.json", udpBidirResult},
}

// TestJSONHasIperf3Keys checks that tools parsing iperf3 -J find every key
// they know, with the type they expect.
func TestJSONHasIperf3Keys(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			iperf := readFixture(t, fx.file)
			ours := writeJSON(t, fx.build(), Options{})
			for _, part := range [][]any{{"start"}, {"intervals", 0}, {"end"}} {
				problems := missingKeys(fmt.Sprint(part), at(t, iperf, part...), at(t, ours, part...))
				for _, p := range problems {
					t.Error(p)
				}
			}
		})
	}
}

// TestJSONKeyCheck makes sure the key comparison can fail.
func TestJSONKeyCheck(t *testing.T) {
	want := map[string]any{"a": json.Number("1"), "b": []any{map[string]any{"c": true}}}
	tests := []struct {
		got  map[string]any
		want int
	}{
		{map[string]any{"a": json.Number("2"), "b": []any{map[string]any{"c": false, "d": "x"}}}, 0},
		{map[string]any{"a": "1", "b": []any{map[string]any{"c": true}}}, 1},
		{map[string]any{"b": []any{map[string]any{}}}, 2},
		{map[string]any{"a": json.Number("1"), "b": []any{}}, 1},
	}
	for i, tt := range tests {
		if got := missingKeys("", want, tt.got); len(got) != tt.want {
			t.Errorf("case %d: %d problems %q; want %d", i, len(got), got, tt.want)
		}
	}
}

func TestJSONFigures(t *testing.T) {
	tests := []struct {
		name string
		r    *result.Result
		// localSends is iperf3's "sender" for the primary direction.
		localSends bool
		reverse    int64
	}{
		{"forward", forwardResult(), true, 0},
		{"parallel", parallelResult(), true, 0},
		{"reverse", reverseResult(), false, 1},
		{"bidir", bidirResult(), true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := writeJSON(t, tt.r, Options{})
			dirs := tt.r.Directions()
			primary := dirs[0]
			if number(t, at(t, doc, "end", "sum_sent", "bytes")) != primary.Sent.Bytes ||
				number(t, at(t, doc, "end", "sum_received", "bytes")) != primary.Received.Bytes ||
				number(t, at(t, doc, "end", "sum_sent", "retransmits")) != primary.Sent.Retransmits {
				t.Errorf("end sums %v / %v; want sent %d (%d retransmits), received %d",
					at(t, doc, "end", "sum_sent"), at(t, doc, "end", "sum_received"), primary.Sent.Bytes, primary.Sent.Retransmits, primary.Received.Bytes)
			}
			if got := at(t, doc, "end", "sum_sent", "sender"); got != tt.localSends {
				t.Errorf("sum_sent.sender = %v; want %v", got, tt.localSends)
			}
			if got := number(t, at(t, doc, "start", "test_start", "reverse")); got != tt.reverse {
				t.Errorf("test_start.reverse = %d; want %d", got, tt.reverse)
			}
			if got := at(t, doc, "start", "cookie"); got != tt.r.Token {
				t.Errorf("cookie %v; want the token %q", got, tt.r.Token)
			}
			if got := len(at(t, doc, "intervals").([]any)); got != intervalsN {
				t.Errorf("%d intervals; want %d", got, intervalsN)
			}
			if got := at(t, doc, "wireperf", "result", "token"); got != tt.r.Token {
				t.Errorf("wireperf.result.token = %v; want %q", got, tt.r.Token)
			}
			// Each interval stream is the local (client) end's view, with
			// both ends' figures beside it.
			row := tt.r.IntervalRows()[0]
			for i, f := range row.Flows {
				s := at(t, doc, "intervals", 0, "streams", i)
				clientSends := f.SenderRole == result.RoleClient
				local := f.Received
				if clientSends {
					local = f.Sent
				}
				if number(t, at(t, s, "bytes")) != local.Bytes || at(t, s, "sender") != clientSends ||
					number(t, at(t, s, "sender_bytes")) != f.Sent.Bytes || number(t, at(t, s, "receiver_bytes")) != f.Received.Bytes {
					t.Errorf("interval stream %d = %v; want bytes %d, sender %v, sender_bytes %d, receiver_bytes %d",
						f.ID, s, local.Bytes, clientSends, f.Sent.Bytes, f.Received.Bytes)
				}
				// iperf3 has TCP figures on the sending end only.
				if _, has := s.(map[string]any)["retransmits"]; has != clientSends {
					t.Errorf("interval stream %d: retransmits present %v; want %v", f.ID, has, clientSends)
				}
			}
			flows := at(t, doc, "wireperf", "flows").([]any)
			if len(flows) != len(tt.r.Flows()) {
				t.Errorf("%d wireperf flows; want %d", len(flows), len(tt.r.Flows()))
			}
		})
	}
}

func TestJSONBidir(t *testing.T) {
	r := bidirResult()
	doc := writeJSON(t, r, Options{})
	dirs := r.Directions()
	if len(dirs) != 2 || dirs[1].SenderRole != result.RoleServer {
		t.Fatalf("test data: directions %v", dirs)
	}
	back := dirs[1]
	if number(t, at(t, doc, "end", "sum_sent_bidir_reverse", "bytes")) != back.Sent.Bytes ||
		number(t, at(t, doc, "end", "sum_received_bidir_reverse", "bytes")) != back.Received.Bytes ||
		at(t, doc, "end", "sum_received_bidir_reverse", "sender") != false {
		t.Errorf("bidir reverse sums %v, %v; want sent %d, received %d, sender false",
			at(t, doc, "end", "sum_sent_bidir_reverse"), at(t, doc, "end", "sum_received_bidir_reverse"), back.Sent.Bytes, back.Received.Bytes)
	}
	// The client receives server→client, so its interval sum is what it read.
	row := r.IntervalRows()[0]
	want := row.SumDirection(result.RoleServer).ReceivedBytes
	if got := number(t, at(t, doc, "intervals", 0, "sum_bidir_reverse", "bytes")); got != want {
		t.Errorf("intervals[0].sum_bidir_reverse.bytes = %d; want %d", got, want)
	}
	if got := number(t, at(t, doc, "start", "test_start", "bidir")); got != 1 {
		t.Errorf("test_start.bidir = %d; want 1", got)
	}
}

func TestJSONStart(t *testing.T) {
	doc := writeJSON(t, forwardResult(), Options{})
	tests := []struct {
		path []any
		want any
	}{
		{[]any{"start", "version"}, "wireperf 0.1.0"},
		{[]any{"start", "connecting_to", "host"}, serverHost},
		{[]any{"start", "connected", 0, "local_port"}, json.Number("40001")},
		{[]any{"start", "connected", 0, "socket"}, json.Number("1")},
		{[]any{"start", "sock_bufsize"}, json.Number("2097152")},
		{[]any{"start", "sndbuf_actual"}, json.Number("4194304")},
		{[]any{"start", "test_start", "duration"}, json.Number("10")},
		{[]any{"start", "timestamp", "time"}, "Mon, 30 Nov 2026 05:55:50 GMT"},
		{[]any{"end", "sender_tcp_congestion"}, "bbr"},
		{[]any{"end", "cpu_utilization_percent", "remote_total"}, json.Number("38.1")},
	}
	for _, tt := range tests {
		if got := at(t, doc, tt.path...); got != tt.want {
			t.Errorf("%v = %v; want %v", tt.path, got, tt.want)
		}
	}
}

func TestJSONErrorTitleAndNaN(t *testing.T) {
	r := forwardResult()
	r.Error = "control connection lost"
	r.Spec.Title = "run 7"
	r.Local.CPU.TotalPercent = math.NaN()
	r.Remote.Streams[0].End = math.Inf(1)
	doc := writeJSON(t, r, Options{})
	tests := []struct {
		path []any
		want any
	}{
		{[]any{"error"}, "control connection lost"},
		{[]any{"title"}, "run 7"},
		{[]any{"end", "cpu_utilization_percent", "host_total"}, json.Number("0")},
		{[]any{"wireperf", "result", "local", "cpu", "total_percent"}, json.Number("0")},
		{[]any{"wireperf", "result", "remote", "streams", 0, "end"}, json.Number("0")},
	}
	for _, tt := range tests {
		if got := at(t, doc, tt.path...); got != tt.want {
			t.Errorf("%v = %v; want %v", tt.path, got, tt.want)
		}
	}
	if !math.IsNaN(r.Local.CPU.TotalPercent) {
		t.Error("writing the JSON changed the Result")
	}
}

// TestJSONAsEmitter checks that JSON writes nothing until Summary, and
// then one whole document.
func TestJSONAsEmitter(t *testing.T) {
	r := parallelResult()
	var b bytes.Buffer
	var e Emitter = &JSON{W: &b}
	if err := e.Header(HeaderFromResult(r)); err != nil {
		t.Fatal(err)
	}
	for _, row := range r.IntervalRows() {
		if err := e.Interval(r, row); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("wrote %d bytes before Summary", b.Len())
	}
	if err := e.Summary(r); err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, b.Bytes())
	if got := len(at(t, doc, "intervals").([]any)); got != intervalsN {
		t.Errorf("%d intervals; want %d", got, intervalsN)
	}
}
