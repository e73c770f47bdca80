package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/daemon"
	"github.com/wireperf/wireperf/internal/mesh"
)

func newMeshCmd(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mesh",
		Short: "Schedule tests over a mesh of hosts from one file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("mesh needs a command: wireperf mesh apply -f FILE, or wireperf mesh import --psconfig FILE")
		},
	}
	var file, db string
	var dryRun bool
	apply := &cobra.Command{
		Use:   "apply",
		Short: "Make the archive's tasks those of a mesh file (applying it twice changes nothing)",
		Long: `wireperf mesh apply reads a mesh file (hosts, groups, tests and schedules; docs/daemon.md
describes it) and makes the tasks it expands into the archive's tasks of that mesh: new ones are
added, changed ones updated, and those no longer in the file removed, in one transaction. A file
with an error changes nothing.`,
		Example: `  wireperf mesh apply -f examples/mesh-3hosts.yaml --db postgres://wireperf@db.example.net/wireperf`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return usagef("mesh apply takes one mesh file, got %d arguments", len(args))
			case len(args) == 1 && file != "" && file != args[0]:
				return usagef("mesh apply: two mesh files, -f %s and %s; give one", file, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				file = args[0] // `mesh apply FILE` as well as `-f FILE`
			}
			if file == "" {
				return usagef("mesh apply needs the mesh file: -f FILE")
			}
			data, err := readFileAtMost(file, mesh.MaxFileSize)
			if err != nil {
				return usageError{err}
			}
			m, err := mesh.Parse(file, data)
			if err != nil {
				return usageError{err}
			}
			warning, overfull := m.CheckUtilisation() // a host busier than 100% is refused
			if warning != "" {
				fmt.Fprintf(e.stderr, "wireperf: warning: %s\n", warning)
			}
			tasks := m.Tasks()
			if dryRun {
				for _, t := range tasks {
					fmt.Fprintf(e.stdout, "%s %s %s → %s every %v\n", t.ID, t.Name, t.Source, t.DestText(), t.Repeat)
				}
				fmt.Fprint(e.stdout, m.UtilisationReport())
			}
			if overfull != nil {
				return usageError{overfull}
			} else if dryRun {
				return nil
			}
			store, err := openArchive(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			res, err := daemon.TasksOf(store).ApplyTasks(cmd.Context(), m.Name, tasks, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "mesh %s: %d tasks: %d added, %d updated, %d unchanged, %d removed\n",
				m.Name, len(tasks), res.Added, res.Updated, res.Unchanged, res.Removed)
			return nil
		},
	}
	apply.Flags().StringVarP(&file, "file", "f", "", "the mesh file (YAML)")
	apply.Flags().BoolVar(&dryRun, "dry-run", false, "list the tasks the file expands into and each host's utilisation; change nothing")
	dbFlag(apply, &db)
	cmd.AddCommand(apply, newMeshImportCmd(e))
	return cmd
}
