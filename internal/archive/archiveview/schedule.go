package archiveview

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wireperf/wireperf/internal/schedule"
	"github.com/wireperf/wireperf/internal/taskstore"
)

// WriteTasks writes the tasks as a table, one a line (`wireperf task
// list`).
func WriteTasks(w io.Writer, tasks []*schedule.Task) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSOURCE\tDEST\tREPEAT\tSLIP\tCLASS\tSTATE\tTEST")
	for _, t := range tasks {
		state := "active"
		if t.Paused {
			state = "paused"
		}
		repeat := "once"
		if t.Repeat > 0 {
			repeat = t.Repeat.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\t%s\n", t.ID, t.Name, t.Source, t.DestText(), repeat, t.Slip, t.Class, state, strings.Join(t.Args, " "))
	}
	return tw.Flush()
}

// timelineWidth is the bar's width in characters.
const timelineWidth = 48

// WriteTimeline writes the runs planned from now for next (`wireperf
// schedule`): per host (only that one, when only is set), a bar of the
// window with each run's start marked (X exclusive, o background), then
// its runs one a line.
func WriteTimeline(w io.Writer, runs []*taskstore.SchedRun, only string, now time.Time, next time.Duration) {
	perHost := map[string][]*taskstore.SchedRun{}
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
