package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/archive/archiveview"
	"github.com/wireperf/wireperf/internal/daemon"
)

func newTaskCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "Add, list, remove, pause and resume scheduled tests",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("say add, list, rm, pause or resume")
		},
	}
	cmd.AddCommand(newTaskAddCmd(e), newTaskListCmd(e), newTaskIDCmd(e, "rm", "Remove a task and its runs not yet started"),
		newTaskIDCmd(e, "pause", "Pause a task: its runs not yet started are dropped"), newTaskIDCmd(e, "resume", "Resume a paused task"))
	return cmd
}

func newTaskAddCmd(e env) *cobra.Command {
	var j daemon.TaskJSON
	var db, start, until string
	cmd := &cobra.Command{
		Use:   "add",
		Short: "Add a scheduled test (or update the one with the same name and hosts)",
		Example: `  wireperf task add --name tput --source ams --dest fra --addr fra.example.net:5201 \
      --test "client -t 10 -P 4" --repeat 1h --slip 10m --random-slip 20m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, f := range []struct{ v, name string }{{j.Name, "--name"}, {j.Source, "--source"}, {j.Dest, "--dest"}, {j.Test, "--test"}} {
				if f.v == "" {
					return usagef("%s is needed", f.name)
				}
			}
			var err error
			if j.Start, err = instantFlag("--start", start); err != nil {
				return err
			}
			if j.Until, err = instantFlag("--until", until); err != nil {
				return err
			}
			t, err := j.Task()
			if err != nil {
				return usageError{err}
			}
			store, err := openArchive(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			c, err := daemon.TasksOf(store).PutTask(cmd.Context(), t, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "task %s %s: %s %s → %s every %v\n", t.ID, c, t.Name, t.Source, t.Dest, t.Repeat)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&j.Name, "name", "", "the test's name (the grid's and the metrics' label)")
	fs.StringVar(&j.Source, "source", "", "the host that runs the test (its daemon's --config host)")
	fs.StringVar(&j.Dest, "dest", "", "the host it tests to")
	fs.StringVar(&j.DestAddr, "addr", "", "where the source reaches the destination's server: HOST or HOST:PORT (default: --dest)")
	fs.StringVar(&j.Test, "test", "", `the test: "client …", "rr …", "udpmon …" or "trace …" with its flags, without the host`)
	fs.StringVar(&j.Class, "class", "exclusive", "exclusive (throughput: never overlaps another on the same host) or background")
	fs.StringVar(&j.Reserve, "reserve", "", "how long a run holds both hosts (default: the test's -t and 2 s)")
	fs.StringVar(&j.Repeat, "repeat", "", "run every DURATION (default: once)")
	fs.StringVar(&j.Slip, "slip", "", "how late a run may start before it is recorded missed")
	fs.StringVar(&j.RandomSlip, "random-slip", "", "start each run a random [0, DURATION) late, to spread runs")
	fs.StringVar(&start, "start", "", "the first run's instant, RFC 3339 (default: on the epoch's grid of --repeat)")
	fs.StringVar(&until, "until", "", "no run after this instant, RFC 3339")
	fs.IntVar(&j.MaxRuns, "max-runs", 0, "at most this many runs (0: no limit)")
	dbFlag(cmd, &db)
	return cmd
}

func instantFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usagef("%s %q: want an RFC 3339 instant such as 2026-03-01T00:00:00Z", name, v)
	}
	return t, nil
}

func newTaskListCmd(e env) *cobra.Command {
	var db, host string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tasks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openArchiveToRead(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			tasks, err := daemon.TasksOf(store).Tasks(cmd.Context(), host)
			if err != nil {
				return err
			}
			if asJSON {
				out := []daemon.TaskJSON{}
				for _, t := range tasks {
					out = append(out, daemon.TaskToJSON(t))
				}
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			return archiveview.WriteTasks(e.stdout, tasks)
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "only the tasks this host runs")
	cmd.Flags().BoolVarP(&asJSON, "json", "J", false, "the tasks as JSON")
	dbFlag(cmd, &db)
	return cmd
}

func newTaskIDCmd(e env, verb, short string) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   verb + " ID...",
		Short: short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, ids []string) error {
			store, err := openArchive(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			for _, id := range ids {
				switch verb {
				case "rm":
					err = daemon.TasksOf(store).DeleteTask(cmd.Context(), id)
				case "pause":
					err = daemon.TasksOf(store).SetPaused(cmd.Context(), id, true, time.Now())
				case "resume":
					err = daemon.TasksOf(store).SetPaused(cmd.Context(), id, false, time.Now())
				}
				if errors.Is(err, archive.ErrNotFound) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "task %s: %s\n", id, map[string]string{"rm": "removed", "pause": "paused", "resume": "resumed"}[verb])
			}
			return nil
		},
	}
	dbFlag(cmd, &db)
	return cmd
}
