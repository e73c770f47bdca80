package logimport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wireperf/wireperf/internal/archive"
	"github.com/wireperf/wireperf/internal/units"
)

// Input is one file to import; Named when the command line names it
// rather than a directory it is under.
type Input struct {
	Path  string
	Named bool
}

// Files expands the paths given, directories into the regular files
// under them in order. A path that can't be read is the error.
func Files(paths []string) ([]Input, error) {
	var files []Input
	for _, a := range paths {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, Input{Path: a, Named: true})
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
			files = append(files, Input{Path: p})
		}
	}
	return files, nil
}

// Tally is what importing a set of files did.
type Tally struct {
	Files    int // files given
	Runs     int // runs stored
	Before   int // files imported before, stored once
	Skipped  int // files under a directory that are not logs
	Problems []error
}

// ImportAll imports every file into store, writing a line to w for each
// file skipped (and Import's own lines). A file named that is not a log
// is a problem; one under a directory is skipped with the reason.
func ImportAll(ctx context.Context, store *archive.Store, files []Input, w io.Writer) Tally {
	t := Tally{Files: len(files)}
	for _, f := range files {
		n, err := Import(ctx, store, f.Path, w)
		var nl *NotLogError
		switch {
		case errors.As(err, &nl) && f.Named:
			t.Problems = append(t.Problems, fmt.Errorf("%s: not a log import reads (%s): %s", f.Path, Kinds, nl.Reason))
		case errors.As(err, &nl):
			fmt.Fprintf(w, "skipped %s: %s\n", f.Path, nl.Reason)
			t.Skipped++
		case errors.Is(err, ErrImportedBefore):
			t.Before++
		case err != nil:
			t.Problems = append(t.Problems, fmt.Errorf("%s: %s", f.Path, strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")))
		default:
			t.Runs += n
		}
	}
	return t
}

// Line is the tally's summary: what was stored, from how many files,
// into dsn.
func (t Tally) Line(dsn string) string {
	notLogs := "not logs"
	if t.Skipped == 1 {
		notLogs = "not a log"
	}
	return fmt.Sprintf("%s stored from %s (%d imported before, %d %s) in %s",
		units.Count(t.Runs, "run"), units.Count(t.Files-t.Skipped-t.Before-len(t.Problems), "file"), t.Before, t.Skipped, notLogs, dsn)
}

// Err is the error the import ends with: its one problem, or how many
// files could not be imported (each said on its own line before).
func (t Tally) Err() error {
	switch len(t.Problems) {
	case 0:
		return nil
	case 1:
		return t.Problems[0]
	}
	return fmt.Errorf("%s could not be imported", units.Count(len(t.Problems), "file"))
}
