package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archiveview"
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
			if !asJSON {
				return archiveview.WriteRun(e.stdout, r)
			}
			if !r.IsAdvise() && r.DocumentFormat != archive.FormatJSON {
				return usagef("run %s was imported from a %s log, not JSON: show it without -J", r.ID, r.DocumentFormat)
			}
			_, err = e.stdout.Write(r.Document)
			return err
		},
	}
	dbFlag(cmd, &db)
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "the stored JSON document, byte for byte")
	return cmd
}
