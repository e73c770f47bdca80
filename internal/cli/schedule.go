package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
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
			tasks, err := store.Tasks(cmd.Context(), "")
			if err != nil {
				return err
			}
			now := time.Now()
			printTimeline(e.stdout, daemon.Upcoming(tasks, host, now, next), host, now, next)
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "only the runs this host takes part in")
	cmd.Flags().DurationVar(&next, "next", next, "how far ahead")
	dbFlag(cmd, &db)
	return cmd
}

// timelineWidth is the bar's width in characters.
const timelineWidth = 48

// printTimeline writes, per host, a bar of the window with each run's
// start marked (X exclusive, o background), then its runs one a line.
func printTimeline(w io.Writer, runs []*archive.SchedRun, only string, now time.Time, next time.Duration) {
	perHost := map[string][]*archive.SchedRun{}
	for _, r := range runs {
		for _, h := range []string{r.Source, r.Dest} {
			if only == "" || h == only {
				perHost[h] = append(perHost[h], r)
			}
		}
	}
	hosts := make([]string, 0, len(perHost))
	for h := range perHost {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	fmt.Fprintf(w, "from %s for %v (X exclusive, o background; each mark is %v)\n", now.Format("2006-01-02 15:04:05 MST"), next,
		(next / timelineWidth).Round(time.Second))
	if len(hosts) == 0 {
		fmt.Fprintln(w, "no runs planned")
		return
	}
	for _, h := range hosts {
		bar := []byte(strings.Repeat(".", timelineWidth))
		for _, r := range perHost[h] {
			i := int(r.Planned.Sub(now) * timelineWidth / next)
			if i < 0 || i >= timelineWidth {
				continue
			}
			if r.Class == "exclusive" {
				bar[i] = 'X'
			} else if bar[i] == '.' {
				bar[i] = 'o'
			}
		}
		fmt.Fprintf(w, "\n%s |%s| %d runs\n", h, bar, len(perHost[h]))
		for i, r := range perHost[h] {
			if i == 20 {
				fmt.Fprintf(w, "  … %d more\n", len(perHost[h])-i)
				break
			}
			role := "→ " + r.Dest
			if r.Dest == h {
				role = "← " + r.Source
			}
			fmt.Fprintf(w, "  %s  %-10s %-8s %s\n", r.Planned.Local().Format("01-02 15:04:05"), r.Test, role, r.Direction)
		}
	}
}
