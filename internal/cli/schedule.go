package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive/archiveview"
	"github.com/wireperf/wireperf/internal/daemon"
)

func newScheduleCmd(e env) *cobra.Command {
	var db, host string
	next := 24 * time.Hour
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "The runs to come, per host, as a timeline",
		Example: `  wireperf schedule --next 2h
  wireperf schedule --host ams --next 24h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if next <= 0 {
				return usagef("--next %v: want a positive duration", next)
			}
			store, err := openArchiveToRead(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			tasks, err := daemon.TasksOf(store).Tasks(cmd.Context(), "")
			if err != nil {
				return err
			}
			now := time.Now()
			archiveview.WriteTimeline(e.stdout, daemon.Upcoming(tasks, host, now, next), host, now, next)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "only the runs this host takes part in")
	cmd.Flags().DurationVar(&next, "next", next, "how far ahead")
	dbFlag(cmd, &db)
	return cmd
}
