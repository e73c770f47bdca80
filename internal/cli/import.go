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
)

func newImportCmd(e env) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "import FILE|DIR...",
		Short: "Store old logs in the archive: iperf2 text or -y C, iperf3 -J, wireperf -J",
		Long: `import reads each file (a directory: every file under it), finds what kind of log it is,
and stores each test in it as a run with its provenance: the source kind, the file's name and
SHA-256. A file that is not a log is skipped with the reason; a file imported before is stored once.`,
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
			var stored, skipped, before, failed int
			for _, path := range files {
				n, err := logimport.Import(cmd.Context(), store, path, e.stdout)
				var nl *logimport.NotLogError
				switch {
				case errors.As(err, &nl):
					fmt.Fprintf(e.stdout, "skipped %s: %s\n", path, nl.Reason)
					skipped++
				case errors.Is(err, logimport.ErrImportedBefore):
					before++
				case err != nil:
					fmt.Fprintf(e.stderr, "wireperf: %s: %v\n", path, oneLine(err))
					failed++
				default:
					stored += n
				}
			}
			fmt.Fprintf(e.stdout, "%d runs stored from %d files (%d imported before, %d not logs) in %s\n",
				stored, len(files)-skipped-before-failed, before, skipped, store.DSN())
			if failed > 0 {
				return fmt.Errorf("%d files could not be imported", failed)
			}
			return nil
		},
	}
	dbFlag(cmd, &db)
	return cmd
}

// importFiles expands directories into the files under them, in order.
func importFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if !st.IsDir() {
			files = append(files, a)
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
		files = append(files, under...)
	}
	return files, nil
}
