package emit

import (
	"encoding/json"
	"io"

	"github.com/wireperf/wireperf/internal/result"
)

// JSONStream writes one JSON object per line as the test runs, in the
// form of iperf3's --json-stream (added in iperf3 3.17; 3.12 lacks it):
// {"event":"start","data":{...}}, one "interval" event per interval, and
// last {"event":"end","data":{...}}, whose data is the JSON document's
// end object. Before it come an "error" event when the test failed, as
// iperf3 writes, and a "wireperf" event with the JSON document's
// "wireperf" object; readers that know only iperf3's events skip it.
// With Full (--json-stream-full-output, iperf3 3.20's and later) -J's whole
// document follows the end event, as iperf3 prints it: indented, over
// many lines, its "end" the same as the end event's data.
type JSONStream struct {
	W    io.Writer
	Opt  Options
	Full bool
}

// event is one line of the stream.
type event struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// Header writes the start event, from the client's view.
func (j *JSONStream) Header(h Header) error {
	return j.write(event{"start", startFromHeader(h)})
}

// Interval writes an interval event.
func (j *JSONStream) Interval(r *result.Result, row result.IntervalRow) error {
	return j.write(event{"interval", intervalObject(r, row)})
}

// Summary writes the closing events, the end event last.
func (j *JSONStream) Summary(r *result.Result) error {
	if r.Error != "" {
		if err := j.write(event{"error", r.Error}); err != nil {
			return err
		}
	}
	if err := j.write(event{"wireperf", extensionOf(r)}); err != nil {
		return err
	}
	if err := j.write(event{"end", endObject(r)}); err != nil || !j.Full {
		return err
	}
	return (&JSON{W: j.W, Opt: j.Opt}).Write(r)
}

// write puts one event on one line; encoding/json escapes any newline
// inside strings, so a line is always a whole event.
func (j *JSONStream) write(e event) error {
	enc := json.NewEncoder(j.W)
	enc.SetEscapeHTML(false)
	return enc.Encode(e)
}
