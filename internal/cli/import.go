package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/logimport"
)

func newImportCmd(e env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "import FILE|DIR...",
		Short: "Store old logs in the archive: " + logimport.Kinds,
		Long: `import reads each file (a directory: every file under it), finds what kind of log it is,
and stores each test in it as a run with its provenance: the source kind, the file's name and
SHA-256. A file named that is not a log is an error; one under a directory is skipped with the
reason. A file imported before is stored once.`,
		Example: `  wireperf import old-logs/
  wireperf import --db postgres://me@db/wireperf run1.json run2.txt
  wireperf table --where source=iperf2-text --rows window --cols time --value sent_bits_per_second`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("import needs at least one FILE or DIR")
			}
			files, err := logimport.Files(args)
			if err != nil {
				return usagef("%v", err)
			}
			store, err := openArchive(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			tally := logimport.ImportAll(cmd.Context(), store, files, e.stdout)
			fmt.Fprintln(e.stdout, tally.Line(store.DSN()))
			if len(tally.Problems) > 1 {
				for _, err := range tally.Problems {
					fmt.Fprintf(e.stderr, "wireperf: %s\n", oneLine(err))
				}
			}
			return tally.Err()
		},
	}
	dbFlag(cmd, &db)
	return cmd
}
