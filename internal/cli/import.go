package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/wireperf/wireperf/internal/archive"
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
				n, err := importOne(cmd, e, store, path)
				var nl *logimport.NotLogError
				switch {
				case errors.As(err, &nl):
					fmt.Fprintf(e.stdout, "skipped %s: %s\n", path, nl.Reason)
					skipped++
				case errors.Is(err, errImportedBefore):
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

// errImportedBefore is a file whose SHA-256 the archive has.
var errImportedBefore = errors.New("imported before")

// importOne stores one file's runs and says what it did.
func importOne(cmd *cobra.Command, e env, store *archive.Store, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() > logimport.MaxFileSize {
		return 0, &logimport.NotLogError{Reason: fmt.Sprintf("larger than %d MiB", logimport.MaxFileSize>>20)}
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return 0, err
	}
	if id, ok, err := store.HasSHA256(cmd.Context(), logimport.SHA256(data)); err != nil {
		return 0, err
	} else if ok {
		fmt.Fprintf(e.stdout, "skipped %s: imported before (run %s)\n", path, id)
		return 0, errImportedBefore
	}
	runs, err := logimport.File(filepath.Base(path), data)
	if err != nil {
		return 0, err
	}
	for _, r := range runs {
		if err := store.PutRun(cmd.Context(), r); err != nil && !errors.Is(err, archive.ErrFinished) {
			return 0, err
		}
		fmt.Fprintf(e.stdout, "imported %s: run %s, %s: %s\n", path, r.ID, logimport.Kind(runs), r.Summary.Line())
	}
	return len(runs), nil
}
