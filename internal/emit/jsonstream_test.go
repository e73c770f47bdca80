package emit

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/wireperf/wireperf/internal/result"
)

func TestJSONStream(t *testing.T) {
	tests := []struct {
		name       string
		r          *result.Result
		fixture    string
		wantEvents []string
	}{
		{"forward", forwardResult(), "iperf3-3.12-tcp.json", []string{"start", "interval", "interval", "interval", "wireperf", "end"}},
		{"bidir", bidirResult(), "iperf3-3.12-tcp-bidir.json", []string{"start", "interval", "interval", "interval", "wireperf", "end"}},
		{"failed", func() *result.Result {
			r := reverseResult()
			r.Error = "server\nrefused" // a newline must not split the event
			return r
		}(), "iperf3-3.12-tcp-R.json", []string{"start", "interval", "interval", "interval", "error", "wireperf", "end"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Replay(&JSONStream{W: &b}, tt.r); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			var events []string
			var last map[string]any
			for _, line := range lines {
				ev := decodeJSON(t, []byte(line))
				if len(ev) != 2 {
					t.Errorf("event %q has keys other than event and data", line)
				}
				name, _ := ev["event"].(string)
				if _, ok := ev["data"]; !ok {
					t.Errorf("event %q has no data", line)
				}
				events = append(events, name)
				last = ev
				if name == "start" {
					for _, p := range missingKeys("start", at(t, readFixture(t, tt.fixture), "start"), ev["data"]) {
						t.Error(p)
					}
				}
				if name == "error" && ev["data"] != tt.r.Error {
					t.Errorf("error event data %q; want %q", ev["data"], tt.r.Error)
				}
			}
			if fmt.Sprint(events) != fmt.Sprint(tt.wantEvents) {
				t.Errorf("events %v; want %v", events, tt.wantEvents)
			}
			// The end event carries exactly the JSON document's end object.
			doc := writeJSON(t, tt.r, Options{})
			if !reflect.DeepEqual(last["data"], doc["end"]) {
				t.Errorf("end event data\n%v\ndiffers from the JSON document's end\n%v", last["data"], doc["end"])
			}
		})
	}
}

// TestJSONStreamStartTime checks that a Header without a start time is
// stamped when it is written rather than with the zero time.
func TestJSONStreamStartTime(t *testing.T) {
	tests := []struct {
		name    string
		h       Header
		minSecs int64
		maxSecs int64
	}{
		{"given", HeaderFromResult(forwardResult()), 1796018150, 1796018150},
		{"zero", Header{ServerAddr: "127.0.0.1:5201"}, 1_700_000_000, 1 << 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := (&JSONStream{W: &b}).Header(tt.h); err != nil {
				t.Fatal(err)
			}
			ev := decodeJSON(t, b.Bytes())
			secs := number(t, at(t, ev, "data", "timestamp", "timesecs"))
			if secs < tt.minSecs || secs > tt.maxSecs {
				t.Errorf("timesecs %d; want %d to %d", secs, tt.minSecs, tt.maxSecs)
			}
		})
	}
}
