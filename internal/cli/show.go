package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/advise"
	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/pivotfmt"
	"github.com/wireperf/wireperf/internal/emit"
	"github.com/wireperf/wireperf/internal/result"
)

func newShowCmd(e env) *cobra.Command {
	var db string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Print one stored run again: its report, or with -J its JSON exactly as first printed",
		Example: `  wireperf show 1a2b3c4d
  wireperf show 1a2b3c4d -J > run.json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("show needs one RUN ID (or a unique prefix of one); see wireperf runs")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openArchiveToRead(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			r, err := store.Get(cmd.Context(), args[0])
			if errors.Is(err, archive.ErrNotFound) {
				return usagef("no run %q in %s (see wireperf runs)", args[0], store.DSN())
			}
			if err != nil {
				return err
			}
			return showRun(e.stdout, r, asJSON)
		},
	}
	dbFlag(cmd, &db)
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "the stored JSON document, byte for byte")
	return cmd
}

func showRun(w io.Writer, r *archive.Run, asJSON bool) error {
	if r.IsAdvise() { // advise's own report, as advise printed it
		if asJSON {
			_, err := w.Write(r.Document)
			return err
		}
		var rep advise.Report
		if err := json.Unmarshal(r.Document, &rep); err != nil {
			return fmt.Errorf("run %s: the stored advise report does not decode: %w", r.ID, err)
		}
		return rep.WriteText(w)
	}
	if asJSON {
		if r.DocumentFormat != archive.FormatJSON {
			return usagef("run %s was imported from a %s log, not JSON: show it without -J", r.ID, r.DocumentFormat)
		}
		_, err := w.Write(r.Document)
		return err
	}
	if r.DocumentFormat != archive.FormatJSON { // an imported log, as iperf printed it
		_, err := w.Write(r.Document)
		return err
	}
	if kind, res := wireperfResult(r.Document); res != nil {
		if kind == "rr" {
			return (&emit.RRText{W: w, Opt: emit.Options{Title: res.Spec.Title}}).Write(res)
		}
		return renderText(w, res)
	}
	// An iperf3 document, or a run that failed before it had one.
	fmt.Fprintf(w, "run %s  %s  %s", r.ID, r.Source, r.State)
	if r.Error != "" {
		fmt.Fprintf(w, ": %s", r.Error)
	}
	fmt.Fprintln(w)
	if r.Cmdline != "" {
		fmt.Fprintf(w, "command: %s\n", archive.RedactSecrets(r.Cmdline))
	}
	names := make([]string, 0, len(r.Axes))
	for k := range r.Axes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
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

// renderText prints a result as the client printed it: header, intervals
// and summary.
func renderText(w io.Writer, res *result.Result) error {
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
