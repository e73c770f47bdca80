package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/logimport"
	"github.com/wireperf/wireperf/internal/units"
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
			files, err := importFiles(args)
			if err != nil {
				return err
			}
			store, err := openArchive(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer store.Close()
			var stored, skipped, before int
			var problems []error
			for _, f := range files {
				n, err := logimport.Import(cmd.Context(), store, f.path, e.stdout)
				var nl *logimport.NotLogError
				switch {
				case errors.As(err, &nl) && f.named:
					// A file asked for by name that is not a log is a
					// mistake; under a directory it is merely skipped.
					problems = append(problems, fmt.Errorf("%s: not a log import reads (%s): %s", f.path, logimport.Kinds, nl.Reason))
				case errors.As(err, &nl):
					fmt.Fprintf(e.stdout, "skipped %s: %s\n", f.path, nl.Reason)
					skipped++
				case errors.Is(err, logimport.ErrImportedBefore):
					before++
				case err != nil:
					problems = append(problems, fmt.Errorf("%s: %s", f.path, oneLine(err)))
				default:
					stored += n
				}
			}
			notLogs := "not logs"
			if skipped == 1 {
				notLogs = "not a log"
			}
			fmt.Fprintf(e.stdout, "%s stored from %s (%d imported before, %d %s) in %s\n",
				units.Count(stored, "run"), units.Count(len(files)-skipped-before-len(problems), "file"), before, skipped, notLogs, store.DSN())
			if len(problems) == 1 {
				return problems[0]
			}
			for _, err := range problems {
				fmt.Fprintf(e.stderr, "wireperf: %s\n", oneLine(err))
			}
			if len(problems) > 0 {
				return fmt.Errorf("%s could not be imported", units.Count(len(problems), "file"))
			}
			return nil
		},
	}
	dbFlag(cmd, &db)
	return cmd
}

// importFile is a file to import; named when the command line names it
// rather than a directory it is under.
type importFile struct {
	path  string
	named bool
}

// importFiles expands directories into the files under them, in order.
func importFiles(args []string) ([]importFile, error) {
	var files []importFile
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if !st.IsDir() {
			files = append(files, importFile{path: a, named: true})
			continue
		}
		var under []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				under = append(under, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(under)
		for _, p := range under {
			files = append(files, importFile{path: p})
		}
	}
	return files, nil
}
