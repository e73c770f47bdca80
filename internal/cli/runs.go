package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archiveview"
	"github.com/wireperf/wireperf/internal/flagvalue"
)

// selectFlags pick runs from the archive: shared by runs and table.
type selectFlags struct {
	db       string
	campaign string
	since    time.Duration
	host     string
	where    []string
}

func (s *selectFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	dbFlag(cmd, &s.db)
	fs.StringVar(&s.campaign, "campaign", "", "only this campaign's runs")
	fs.Var(flagvalue.Duration(&s.since), "since", "only runs started this long ago or less, e.g. 24h")
	fs.StringVar(&s.host, "host", "", "only runs whose local or remote host name contains this")
	fs.StringArrayVar(&s.where, "where", nil, "only runs where KEY=VALUE: source, state, or an axis (window=1M); repeatable")
}

// selection turns the flags into the archive's filter and the --where
// conditions on axes (package archiveview).
func (s *selectFlags) selection(now time.Time) (archiveview.Selection, error) {
	f := archive.Filter{Campaign: s.campaign, Host: s.host}
	if s.since > 0 {
		f.Since = now.Add(-s.since)
	}
	sel, err := archiveview.Where(f, s.where)
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
