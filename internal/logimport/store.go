package logimport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wireperf/wireperf/internal/archive"
)

// ErrImportedBefore is a file whose checksum the archive has.
var ErrImportedBefore = errors.New("imported before")

// Import stores the runs of the log at path in store, and says on w what
// it did: each run it stored, or the run a file imported before gave
// (ErrImportedBefore). A file that is not a log is a *NotLogError.
func Import(ctx context.Context, store *archive.Store, path string, w io.Writer) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() > MaxFileSize {
		return 0, notLog("larger than %d MiB", MaxFileSize>>20)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return 0, err
	}
	if id, ok, err := store.HasSHA256(ctx, SHA256(data)); err != nil {
		return 0, err
	} else if ok {
		fmt.Fprintf(w, "skipped %s: imported before (run %s)\n", path, id)
		return 0, ErrImportedBefore
	}
	runs, err := File(filepath.Base(path), data)
	if err != nil {
		return 0, err
	}
	for _, r := range runs {
		if err := store.PutRun(ctx, r); err != nil && !errors.Is(err, archive.ErrFinished) {
			return 0, err
		}
		fmt.Fprintf(w, "imported %s: run %s, %s: %s\n", path, r.ID, Kind(runs), r.Summary.Line())
	}
	return len(runs), nil
}
