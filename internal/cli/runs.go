package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive/archiveview"
)

// selectFlags pick runs from the archive (archiveview.SelectFlags) in
// the archive --db names: shared by runs and table.
type selectFlags struct {
	db string
	archiveview.SelectFlags
}

func (s *selectFlags) register(cmd *cobra.Command) {
	dbFlag(cmd, &s.db)
	s.Register(cmd.Flags())
}

// selection turns the flags into the archive's filter and the --where
// conditions on axes (package archiveview).
func (s *selectFlags) selection(now time.Time) (archiveview.Selection, error) {
	sel, err := s.Selection(now)
	if err != nil {
		return sel, usageError{err}
	}
	return sel, nil
}

func newRunsCmd(e env) *cobra.Command {
	var sel selectFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List the runs stored in the archive, one line each",
		Example: `  wireperf runs --campaign grid
  wireperf runs --since 24h --host lab-b -J
  wireperf runs --where source=iperf2-text`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := sel.selection(time.Now())
			if err != nil {
				return err
			}
			store, err := openArchiveToRead(cmd.Context(), sel.db)
			if err != nil {
				return err
			}
			defer store.Close()
			all, err := store.List(cmd.Context(), s.Filter)
			if err != nil {
				return err
			}
			if asJSON {
				return archiveview.WriteRunsJSON(e.stdout, s.Keep(all))
			}
			archiveview.WriteRunsText(e.stdout, s.Keep(all))
			return nil
		},
	}
	sel.register(cmd)
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "a JSON array of runs")
	return cmd
}
