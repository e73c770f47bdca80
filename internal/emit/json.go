package emit

import (
	"encoding/json"
	"io"

	"github.com/wireperf/wireperf/internal/result"
)

// JSON writes one document in iperf3's -J layout, with wireperf's
// additions beside iperf3's keys and a top-level "wireperf" object.
type JSON struct {
	W   io.Writer
	Opt Options
}

// Header writes nothing: the document is written whole by Summary.
func (j *JSON) Header(Header) error { return nil }

// Interval writes nothing: Summary takes every interval from the Result.
func (j *JSON) Interval(*result.Result, result.IntervalRow) error { return nil }

// Summary writes the document.
func (j *JSON) Summary(r *result.Result) error { return j.Write(r) }

// Write writes the document for r.
func (j *JSON) Write(r *result.Result) error {
	doc := iperfDocument{
		Start:     startFromResult(r),
		Intervals: []iperfInterval{},
		End:       endObject(r),
		Title:     titleOf(j.Opt, r),
		ExtraData: r.Spec.ExtraData,
		Error:     r.Error,
		Wireperf:  extensionOf(r),
	}
	if o := r.ServerOutput; o != nil {
		doc.ServerOutputJSON, doc.ServerOutputText = o.JSON, o.Text
	}
	for _, row := range r.IntervalRows() {
		doc.Intervals = append(doc.Intervals, intervalObject(r, row))
	}
	enc := json.NewEncoder(j.W)
	enc.SetIndent("", "\t") // iperf3 indents with tabs too
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// titleOf is -T: the option, else the spec's.
func titleOf(o Options, r *result.Result) string {
	if o.Title != "" {
		return o.Title
	}
	return r.Spec.Title
}
