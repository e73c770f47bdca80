package archiveview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
)

// WriteRun prints a stored run's report again (`wireperf show`): an
// advise report as advise printed it, an imported log as iperf printed
// it, a wireperf test as the client printed it, and anything else (an
// iperf3 document, or a run that failed before it had one) as what the
// archive knows of it.
func WriteRun(w io.Writer, r *archive.Run) error {
	if r.IsAdvise() {
		var rep advise.Report
		if err := json.Unmarshal(r.Document, &rep); err != nil {
			return fmt.Errorf("run %s: the stored advise report does not decode: %w", r.ID, err)
		}
		return rep.WriteText(w)
	}
	if r.DocumentFormat != archive.FormatJSON {
		_, err := w.Write(r.Document)
		return err
	}
	if kind, res := wireperfResult(r.Document); res != nil {
		if kind == "rr" {
			return (&emit.RRText{W: w, Opt: emit.Options{Title: res.Spec.Title}}).Write(res)
		}
		return writeResultText(w, res)
	}
	fmt.Fprintf(w, "run %s  %s  %s", r.ID, r.Source, r.State)
	if r.Error != "" {
		fmt.Fprintf(w, ": %s", r.Error)
	}
	fmt.Fprintln(w)
	if r.Cmdline != "" {
		fmt.Fprintf(w, "command: %s\n", archive.RedactSecrets(r.Cmdline))
	}
	for _, k := range axisNames(r) {
		fmt.Fprintf(w, "%s: %s\n", k, pivotfmt.AxisText(k, r.Axes[k]))
	}
	fmt.Fprintf(w, "result: %s\n", r.Summary.Line())
	return nil
}

// wireperfResult is the Result inside a wireperf -J document, if any: a
// bulk test's (kind "") or a request-response test's (kind "rr").
func wireperfResult(doc []byte) (kind string, res *result.Result) {
	var d struct {
		Kind     string         `json:"kind"`
		Result   *result.Result `json:"result"`
		Wireperf *struct {
			Result *result.Result `json:"result"`
		} `json:"wireperf"`
	}
	if json.NewDecoder(bytes.NewReader(doc)).Decode(&d) != nil {
		return "", nil
	}
	if d.Kind == "rr" {
		return d.Kind, d.Result
	}
	if d.Wireperf == nil {
		return "", nil
	}
	return "", d.Wireperf.Result
}

// writeResultText prints a result as the client printed it: header,
// intervals and summary, with the server it connected to.
func writeResultText(w io.Writer, res *result.Result) error {
	em := &emit.Text{W: w, Opt: emit.Options{Format: 'a', Title: res.Spec.Title}}
	host, port := res.ConnectHost, res.ConnectPort
	if host == "" {
		host = strings.Split(res.ServerAddr, ":")[0]
	}
	if err := em.Header(emit.HeaderOf(res, host, port)); err != nil {
		return err
	}
	for _, row := range res.IntervalRows() {
		if err := em.Interval(res, row); err != nil {
			return err
		}
	}
	return em.Summary(res)
}
